import { describe, expect, it } from 'vitest';
import { CalleeExited, DownMessage, ExitMessage, type ExitReason, type Ref } from '../../../src/actors/index.js';
import { placementHub } from '../../../src/actors/placement/hub.js';
import { runScript } from '../../support/run-script.js';
import { eventually } from '../../support/systems.js';
import { exitLog, recorder } from '../helpers.js';
import { ask, checkPlacementLeaks, killAll, pidAlive, placementSystem, spawnProbe, type HostPlacement } from './support.js';

checkPlacementLeaks();

/**
 * A host that dies takes its actors with it: what was linked to or monitoring them gets the
 * documented reason, `{ shutdown: { thread_exit: code } }` or `{ shutdown: { process_exit: code,
 * signal } }`, and calls waiting on them fail with CalleeExited carrying it.
 */
async function watchHostDeath(placement: HostPlacement, kill: (system: ReturnType<typeof placementSystem>, victim: Ref) => Promise<void>) {
  const system = placementSystem();
  const { ref: linked } = recorder(system);
  const { ref: trapping, seen: trapped } = recorder(system, { trapExit: true });
  const victim = await spawnProbe(system, placement, { link: linked, host: 'doomed' });
  const neighbour = await spawnProbe(system, placement, { host: 'doomed' });
  await ask(system, neighbour, { link: trapping });
  const exits = exitLog(system, linked);
  const down = system.exited(victim);
  const monitorSeen: unknown[] = [];
  system.spawn({ init: (ctx) => void ctx.monitor(neighbour), handle: (ctx, message) => void (monitorSeen.push(message), ctx.stop()) });
  const pending = ask(system, neighbour, 'never', 10_000).catch((error: unknown) => error);
  await kill(system, victim);
  const reason = await down;
  await eventually(() => exits.has(linked) && trapped.length === 1 && monitorSeen.length === 1);
  const callError = (await pending) as CalleeExited;
  return { system, reason, linkedReason: exits.get(linked), trapped: trapped[0] as ExitMessage, down: monitorSeen[0] as DownMessage, callError, neighbour };
}

function expectEverywhere(outcome: Awaited<ReturnType<typeof watchHostDeath>>, reason: ExitReason): void {
  expect(outcome.reason).toEqual(reason);
  expect(outcome.linkedReason).toEqual(reason);
  expect(outcome.trapped).toBeInstanceOf(ExitMessage);
  expect(outcome.trapped.from).toBe(outcome.neighbour);
  expect(outcome.trapped.reason).toEqual(reason);
  expect(outcome.down).toBeInstanceOf(DownMessage);
  expect(outcome.down.reason).toEqual(reason);
  expect(outcome.callError).toBeInstanceOf(CalleeExited);
  expect(outcome.callError.target).toBe(outcome.neighbour);
  expect(outcome.callError.reason).toEqual(reason);
  expect(outcome.system.isAlive(outcome.neighbour)).toBe(false);
  expect(outcome.system.timerCount).toBe(0);
}

describe('a thread host that dies', () => {
  it('process.exit(3) in a handler: { shutdown: { thread_exit: 3 } }', async () => {
    const outcome = await watchHostDeath('thread', async (system, victim) => {
      void ask(system, victim, { exitHost: 3 }).catch(() => {});
    });
    expectEverywhere(outcome, { shutdown: { thread_exit: 3 } });
  });

  it('an error thrown outside any handler: { shutdown: { thread_exit: 1 } }', async () => {
    const outcome = await watchHostDeath('thread', async (system, victim) => {
      await ask(system, victim, { throwOutside: 'uncaught in the host' });
    });
    expectEverywhere(outcome, { shutdown: { thread_exit: 1 } });
  });

  it('out of memory (maxHeapMb): { shutdown: { thread_exit: 1 } }', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, 'thread', { maxHeapMb: 16 });
    const down = system.exited(ref);
    const call = ask(system, ref, { hog: 100_000 }).catch((error: unknown) => error);
    expect(await down).toEqual({ shutdown: { thread_exit: 1 } });
    expect(await call).toBeInstanceOf(CalleeExited);
  });
});

describe('a process host that dies', () => {
  it('SIGKILL: { shutdown: { process_exit: null, signal: "SIGKILL" } }', async () => {
    const outcome = await watchHostDeath('process', async (system, victim) => {
      const { pid } = await ask<{ pid: number }>(system, victim, 'where');
      process.kill(pid, 'SIGKILL');
    });
    expectEverywhere(outcome, { shutdown: { process_exit: null, signal: 'SIGKILL' } });
  });

  it('process.exit(3) in a handler: { shutdown: { process_exit: 3, signal: null } }', async () => {
    const outcome = await watchHostDeath('process', async (system, victim) => {
      void ask(system, victim, { exitHost: 3 }).catch(() => {});
    });
    expectEverywhere(outcome, { shutdown: { process_exit: 3, signal: null } });
  });

  it('an error thrown outside any handler: { shutdown: { process_exit: 1, signal: null } }', async () => {
    const outcome = await watchHostDeath('process', async (system, victim) => {
      await ask(system, victim, { throwOutside: 'uncaught in the host' });
    });
    expectEverywhere(outcome, { shutdown: { process_exit: 1, signal: null } });
  });
});

describe('host death seen from another host', () => {
  it('an actor in a thread linked to an actor in a killed process gets the process reason', async () => {
    const system = placementSystem();
    const inProcess = await spawnProbe(system, 'process');
    const inThread = await spawnProbe(system, 'thread', {}, { trapExit: true });
    expect(await ask(system, inThread, { link: inProcess })).toBe('linked');
    const monitorId = await ask<number>(system, inThread, { monitor: inProcess });
    const { pid } = await ask<{ pid: number }>(system, inProcess, 'where');
    const down = system.exited(inProcess);
    process.kill(pid, 'SIGKILL');
    const reason = { shutdown: { process_exit: null, signal: 'SIGKILL' } };
    expect(await down).toEqual(reason);
    let log: unknown[] = [];
    for (let attempt = 0; attempt < 200 && log.length < 2; attempt++) log.push(...((await ask(system, inThread, 'log')) as unknown[]));
    expect(log).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'EXIT', from: inProcess, reason }),
        expect.objectContaining({ type: 'DOWN', monitor: monitorId, ref: inProcess, reason }),
      ]),
    );
    await killAll(system, inThread);
  });
});

describe('host lifetime', () => {
  it('co-located actors share a host, which stops once its last actor exits', async () => {
    const system = placementSystem();
    const first = await spawnProbe(system, 'process', { host: 'pair' });
    const second = await spawnProbe(system, 'process', { host: 'pair' });
    expect(first.creation).toBe(second.creation);
    const [a, b] = await Promise.all([ask<{ pid: number }>(system, first, 'where'), ask<{ pid: number }>(system, second, 'where')]);
    expect(a.pid).toBe(b.pid);
    await expect(spawnProbe(system, 'thread', { host: 'pair' })).rejects.toMatchObject({ code: 'PLACEMENT_INVALID', option: 'host' });
    await killAll(system, first);
    expect(await ask(system, second, 'ping')).toBe('pong');
    expect(pidAlive(a.pid)).toBe(true);
    await killAll(system, second);
    await eventually(() => !pidAlive(a.pid), 10_000, 'the idle host to exit');
  });

  it('a host of its own per actor by default', async () => {
    const system = placementSystem();
    const first = await spawnProbe(system, 'thread');
    const second = await spawnProbe(system, 'thread');
    expect(first.creation).not.toBe(second.creation);
    const [a, b] = await Promise.all([ask<{ thread: number }>(system, first, 'where'), ask<{ thread: number }>(system, second, 'where')]);
    expect(a.thread).not.toBe(b.thread);
    await killAll(system, first, second);
  });

  it('shutdown() terminates every host; pending calls fail with CalleeExited(shutdown)', async () => {
    const system = placementSystem();
    const inThread = await spawnProbe(system, 'thread');
    const inProcess = await spawnProbe(system, 'process');
    const { pid } = await ask<{ pid: number }>(system, inProcess, 'where');
    const pending = ask(system, inThread, 'never', 10_000).catch((error: unknown) => error);
    const down = system.exited(inProcess);
    system.shutdown();
    expect(await down).toBe('shutdown');
    expect(await pending).toMatchObject({ code: 'ACTOR_CALLEE_EXITED', reason: 'shutdown' });
    const { hostsExited } = await import('../../../src/actors/index.js');
    await hostsExited(system);
    expect(pidAlive(pid)).toBe(false);
    await expect(spawnProbe(system, 'thread')).rejects.toMatchObject({ code: 'ACTOR_SYSTEM_STOPPED' });
  });

  it('hosts go away with their parent process', async () => {
    const result = await runScript('test/actors/placement/fixtures/orphaning-parent.ts');
    expect(result.code).toBe(0);
    const pids = JSON.parse(result.stdout.trim()) as number[];
    expect(pids).toHaveLength(2);
    // The process host's pid, and the parent's own (its thread host's).
    expect(pids[0]).not.toBe(pids[1]);
    await eventually(() => pids.every((pid) => !pidAlive(pid)), 10_000, 'the orphaned host process to exit');
  });

  it('malformed frames in well-formed records are counted and dropped; the host stays', async () => {
    for (const placement of ['thread', 'process'] as const) {
      const system = placementSystem();
      const ref = await spawnProbe(system, placement);
      const hub = placementHub(system);
      const before = hub.stats.framesDropped;
      expect(await ask(system, ref, { garbage: system.creation })).toBe(5);
      expect(await ask(system, ref, 'ping')).toBe('pong');
      expect(hub.stats.framesDropped - before).toBe(5);
      await killAll(system, ref);
    }
  });
});
