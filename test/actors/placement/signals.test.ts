import { describe, expect, it } from 'vitest';
import { DownMessage, ExitMessage, shutdownWith, type ExitReason, type Ref } from '../../../src/actors/index.js';
import { eventually } from '../../support/systems.js';
import { exitLog, recorder } from '../helpers.js';
import { ask, checkPlacementLeaks, HOST_PLACEMENTS, killAll, placementSystem, spawnProbe } from './support.js';

checkPlacementLeaks();

/** A local actor that records what it handles and traps exits when asked. */
function localActor(system: ReturnType<typeof placementSystem>, trapExit = false) {
  return recorder(system, { trapExit });
}

describe.each(HOST_PLACEMENTS)('links, monitors and exit signals across a %s boundary', (placement) => {
  it('a remote crash kills a linked local actor that does not trap exits', async () => {
    const system = placementSystem();
    const { ref: local } = localActor(system);
    const ref = await spawnProbe(system, placement, { link: local });
    expect(system.info(local)?.links).toEqual([ref]);
    const exits = exitLog(system, local);
    await ask(system, ref, { crash: 'remote boom' }).catch(() => {});
    await eventually(() => exits.has(local));
    const reason = exits.get(local) as Error;
    expect(reason).toBeInstanceOf(Error);
    expect(reason.message).toBe('remote boom');
  });

  it('a trapping local actor gets an ExitMessage with the remote reason', async () => {
    const system = placementSystem();
    const { ref: local, seen } = localActor(system, true);
    const ref = await spawnProbe(system, placement, { link: local });
    expect(await ask(system, ref, { stop: shutdownWith({ why: 'done' }) })).toBe('stopping');
    await eventually(() => seen.length === 1);
    const exit = seen[0] as ExitMessage;
    expect(exit).toBeInstanceOf(ExitMessage);
    expect(exit.from).toBe(ref);
    expect(exit.reason).toEqual({ shutdown: { why: 'done' } });
    expect(system.info(local)?.links).toEqual([]);
    await killAll(system, local);
  });

  it('a local crash kills a linked remote actor; a trapping remote actor gets the ExitMessage', async () => {
    const system = placementSystem();
    const doomed = system.spawn(() => {
      throw new Error('local boom');
    });
    const ref = await spawnProbe(system, placement, { host: 'linked' });
    const trapping = await spawnProbe(system, placement, { host: 'linked', trapExit: true });
    expect(await ask(system, ref, { link: doomed })).toBe('linked');
    expect(await ask(system, trapping, { link: doomed })).toBe('linked');
    expect(system.info(doomed)?.links).toEqual(expect.arrayContaining([ref, trapping]));
    const refExit = system.exited(ref);
    system.send(doomed, 'crash now');
    const reason = (await refExit) as Error;
    expect(reason.message).toBe('local boom');
    const [exit] = (await ask(system, trapping, 'log')) as ExitMessage[];
    expect(exit).toBeInstanceOf(ExitMessage);
    expect(exit!.from).toBe(doomed);
    expect((exit!.reason as Error).message).toBe('local boom');
    await killAll(system, trapping);
  });

  it('links to a dead actor, either way, give noproc; unlink stops the signal', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, placement, {}, { trapExit: true });
    const dead = system.spawn(() => {});
    await killAll(system, dead);
    expect(await ask(system, ref, { link: dead })).toBe('linked');
    const [exit] = (await ask(system, ref, 'log')) as ExitMessage[];
    expect(exit).toMatchObject({ type: 'EXIT', from: dead, reason: 'noproc' });

    const { ref: local } = localActor(system);
    expect(await ask(system, ref, { link: local })).toBe('linked');
    expect(await ask(system, ref, { unlink: local })).toBe('unlinked');
    expect(system.info(local)?.links).toEqual([]);
    system.exit(local, 'shutdown');
    expect(await ask(system, ref, 'log')).toEqual([]);
    await killAll(system, ref);
  });

  it('a local actor links to a placed actor with ctx.link, and the link carries its exit', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, placement);
    const seen: unknown[] = [];
    const local = system.spawn(
      {
        init(ctx) {
          ctx.link(ref);
        },
        handle(_ctx, message) {
          seen.push(message);
        },
      },
      { trapExit: true },
    );
    await eventually(() => system.info(local)?.links.length === 1);
    // The remote side holds the link too: killing the local actor takes the remote one down.
    await ask(system, ref, 'ping');
    const remoteExit = system.exited(ref);
    system.exit(local, 'kill');
    expect(await remoteExit).toBe('killed');
  });

  it('monitors deliver DOWN with the real reason, both ways, and demonitor is honoured', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, placement);
    const seen: unknown[] = [];
    let monitorId = 0;
    const watcher = system.spawn({
      init(ctx) {
        monitorId = ctx.monitor(ref);
      },
      handle(_ctx, message) {
        seen.push(message);
      },
    });
    const callbackReason = system.exited(ref);
    await ask(system, ref, 'ping');
    await ask(system, ref, { crash: 'watched boom' }).catch(() => {});
    await eventually(() => seen.length === 1);
    const down = seen[0] as DownMessage;
    expect(down).toBeInstanceOf(DownMessage);
    expect(down.monitor).toBe(monitorId);
    expect(down.ref).toBe(ref);
    expect((down.reason as Error).message).toBe('watched boom');
    expect(((await callbackReason) as Error).message).toBe('watched boom');
    expect(system.info(watcher)?.monitors).toEqual([]);

    // The placed actor monitors a local one; a dead target gives noproc at once.
    const second = await spawnProbe(system, placement);
    const { ref: local } = localActor(system);
    const id = await ask<number>(system, second, { monitor: local });
    expect(system.info(local)?.monitoredBy).toEqual([]);
    system.exit(local, shutdownWith('bye'));
    await eventually(() => !system.isAlive(local));
    const log = (await ask(system, second, 'log')) as DownMessage[];
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ type: 'DOWN', monitor: id, ref: local, reason: { shutdown: 'bye' } });
    await ask(system, second, { monitor: local });
    expect(((await ask(system, second, 'log')) as DownMessage[])[0]).toMatchObject({ type: 'DOWN', ref: local, reason: 'noproc' });

    // watch() from outside: its cancel function also reaches the host.
    const calls: ExitReason[] = [];
    const unwatch = system.watch(second, (reason) => calls.push(reason));
    unwatch();
    await killAll(system, second, watcher);
    expect(calls).toEqual([]);
  });

  it('exit signals cross: normal is ignored, shutdown kills, a trapping actor gets a message, kill is untrappable', async () => {
    const system = placementSystem();
    const plain = await spawnProbe(system, placement, { host: 'signals' });
    const trapping = await spawnProbe(system, placement, { host: 'signals', trapExit: true });
    system.exit(plain, 'normal');
    expect(await ask(system, plain, 'ping')).toBe('pong');
    system.exit(trapping, shutdownWith('asked'));
    const [exit] = (await ask(system, trapping, 'log')) as ExitMessage[];
    expect(exit).toBeInstanceOf(ExitMessage);
    expect(exit).toMatchObject({ from: system.outside, reason: { shutdown: 'asked' } });
    const killed = system.exited(trapping);
    system.exit(trapping, 'kill');
    expect(await killed).toBe('killed');
    const stopped = system.exited(plain);
    system.exit(plain, 'shutdown');
    expect(await stopped).toBe('shutdown');
  });

  it('a placed actor sends exit signals to local actors (from = its ref)', async () => {
    const system = placementSystem();
    const ref = await spawnProbe(system, placement);
    const { ref: trapping, seen } = localActor(system, true);
    const { ref: plain } = localActor(system);
    const plainExit = system.exited(plain);
    await ask(system, ref, { exit: trapping, reason: 'shutdown' });
    await ask(system, ref, { exit: plain, reason: 'kill' });
    expect(await plainExit).toBe('killed');
    await eventually(() => seen.length === 1);
    expect(seen[0]).toMatchObject({ type: 'EXIT', from: ref, reason: 'shutdown' });
    await killAll(system, ref, trapping);
  });

  it('trap-exit inside the host: a placed actor traps a crash of a linked actor in another host', async () => {
    const system = placementSystem();
    const watcher = await spawnProbe(system, placement);
    const other = await spawnProbe(system, placement === 'thread' ? 'process' : 'thread');
    expect(await ask(system, watcher, 'trap')).toBe('trapping');
    expect(await ask(system, watcher, { link: other })).toBe('linked');
    await ask(system, other, { crash: 'neighbour boom' }).catch(() => {});
    await eventually(() => !system.isAlive(other));
    let log: unknown[] = [];
    for (let attempt = 0; attempt < 100 && log.length === 0; attempt++) log = (await ask(system, watcher, 'log')) as unknown[];
    expect(log[0]).toBeInstanceOf(ExitMessage);
    expect((log[0] as ExitMessage).from).toBe(other);
    expect(((log[0] as ExitMessage).reason as Error).message).toBe('neighbour boom');
    await killAll(system, watcher);
  });
});

export type { Ref };
