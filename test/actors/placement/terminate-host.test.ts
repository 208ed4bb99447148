import { describe, expect, it } from 'vitest';
import { CalleeExited, DownMessage, placementHosts, placementStats, terminateHost, type Ref } from '../../../src/actors/index.js';
import { eventually } from '../../support/systems.js';
import { exitLog } from '../helpers.js';
import { ask, checkPlacementLeaks, HOST_PLACEMENTS, killAll, pidAlive, placementSystem, spawnProbe } from './support.js';

checkPlacementLeaks();

/** Longest gap between ticks of a 5 ms timer on this loop while `during` runs. */
async function worstTickGap(during: () => Promise<void>): Promise<number> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  try {
    await during();
  } finally {
    clearInterval(timer);
  }
  return worst;
}

describe('terminateHost', () => {
  for (const placement of HOST_PLACEMENTS) {
    it(`ends a ${placement} host stuck in an endless CPU loop; its actors exit as for a crash`, async () => {
      const system = placementSystem();
      const victim = await spawnProbe(system, placement, { host: 'busy' });
      const neighbour = await spawnProbe(system, placement, { host: 'busy' });
      const { pid } = await ask<{ pid: number }>(system, victim, 'where');
      const linked = system.spawn({ handle() {} }, { trapExit: false });
      await ask(system, neighbour, { link: linked });
      const exits = exitLog(system, linked);
      const downs: DownMessage[] = [];
      system.spawn({ init: (ctx) => void ctx.monitor(victim), handle: (ctx, message) => void (downs.push(message as DownMessage), ctx.stop()) });
      const victimExit = system.exited(victim);
      const neighbourExit = system.exited(neighbour);
      const spinning = ask(system, victim, 'spin', 60_000).catch((error: unknown) => error);
      // The host no longer answers anything: its loop never comes back to read a frame.
      await expect(ask(system, neighbour, 'ping', 300)).rejects.toMatchObject({ code: 'ACTOR_CALL_TIMEOUT' });

      let terminated: boolean | undefined;
      const gap = await worstTickGap(async () => {
        terminated = await terminateHost(system, victim, 'hard-timeout');
      });
      expect(terminated).toBe(true);
      expect(placementStats(system)?.hostsTerminated).toBe(1);
      // The main loop was never blocked by the spinning host nor by ending it.
      expect(gap).toBeLessThan(250);

      const reason =
        placement === 'thread'
          ? { shutdown: { thread_exit: 1, terminated: 'hard-timeout' } }
          : { shutdown: { process_exit: null, signal: 'SIGKILL', terminated: 'hard-timeout' } };
      expect(await victimExit).toEqual(reason);
      expect(await neighbourExit).toEqual(reason);
      const callError = (await spinning) as CalleeExited;
      expect(callError).toBeInstanceOf(CalleeExited);
      expect(callError.reason).toEqual(reason);
      await eventually(() => downs.length === 1 && exits.has(linked));
      expect(downs[0]!.reason).toEqual(reason);
      expect(exits.get(linked)).toEqual(reason);
      expect(placementHosts(system)).toEqual([]);
      if (placement === 'process') expect(pidAlive(pid)).toBe(false);

      // Nothing left to terminate; a fresh host is a plain spawn.
      expect(await terminateHost(system, victim)).toBe(false);
      const fresh = await spawnProbe(system, placement);
      expect(fresh.creation).not.toBe(victim.creation);
      expect(await ask(system, fresh, 'ping')).toBe('pong');
      await killAll(system, fresh);
    });
  }

  it('is false for an actor on the loop, and for a system that never placed one', async () => {
    const system = placementSystem();
    const local: Ref = system.spawn({ handle() {} });
    expect(await terminateHost(system, local)).toBe(false);
    const inThread = await spawnProbe(system, 'thread');
    expect(await terminateHost(system, local)).toBe(false);
    expect(await ask(system, inThread, 'ping')).toBe('pong');
    await killAll(system, local, inThread);
  });

  it('two terminations of one host resolve together, with the first detail', async () => {
    const system = placementSystem();
    const victim = await spawnProbe(system, 'process');
    const { pid } = await ask<{ pid: number }>(system, victim, 'where');
    const exit = system.exited(victim);
    void ask(system, victim, 'spin', 60_000).catch(() => {});
    const [first, second] = await Promise.all([terminateHost(system, victim, 'first'), terminateHost(system, victim, 'second')]);
    expect([first, second]).toEqual([true, true]);
    expect(placementStats(system)?.hostsTerminated).toBe(1);
    expect(await exit).toMatchObject({ shutdown: { terminated: 'first' } });
    expect(pidAlive(pid)).toBe(false);
  });
});
