import { describe, expect, it } from 'vitest';
import { DownMessage, type ExitReason, type MonitorRef, type Ref } from '../../src/actors/index.js';
import { testSystem } from '../support/systems.js';
import { exitLog } from './helpers.js';

/** An actor that monitors on request and records every DOWN it handles. */
function watcher(system: ReturnType<typeof testSystem>) {
  const downs: DownMessage[] = [];
  const monitors: MonitorRef[] = [];
  const ref = system.spawn<{ watch: Ref } | { forget: MonitorRef; flush?: boolean }>((message, ctx) => {
    if (message instanceof DownMessage) downs.push(message);
    else if ('watch' in message) monitors.push(ctx.monitor(message.watch));
    else if ('forget' in message) ctx.demonitor(message.forget, message.flush);
  });
  return { ref, downs, monitors };
}

describe('monitors', () => {
  it.each<[string, ExitReason]>([
    ['normal', 'normal'],
    ['shutdown', 'shutdown'],
    ['{shutdown, detail}', { shutdown: 'bye' }],
    ['an error', new Error('crash')],
  ])('deliver DOWN with the monitor ref, the target and the exit reason (%s)', async (_label, reason) => {
    const system = testSystem();
    const w = watcher(system);
    const target = system.spawn<string>((_m, ctx) => ctx.stop(reason));
    system.send(w.ref, { watch: target });
    await system.settle();
    system.send(target, 'stop');
    await system.settle();
    expect(w.downs).toHaveLength(1);
    expect(w.downs[0]!.type).toBe('DOWN');
    expect(w.downs[0]!.monitor).toBe(w.monitors[0]);
    expect(w.downs[0]!.ref).toBe(target);
    expect(w.downs[0]!.reason).toEqual(reason);
    expect(system.isAlive(w.ref)).toBe(true);
    system.exit(w.ref, 'kill');
  });

  it('are one-way: the watcher dying leaves the target alone, and the target monitor list is cleaned', async () => {
    const system = testSystem();
    const w = watcher(system);
    const target = system.spawn(() => {});
    system.send(w.ref, { watch: target });
    await system.settle();
    expect(system.info(target)?.monitoredBy).toEqual([w.ref]);
    system.exit(w.ref, new Error('watcher crashed'));
    expect(system.isAlive(target)).toBe(true);
    expect(system.info(target)?.monitoredBy).toEqual([]);
    system.exit(target, 'kill');
  });

  it('a killed target is seen as killed', async () => {
    const system = testSystem();
    const w = watcher(system);
    const target = system.spawn(() => {});
    system.send(w.ref, { watch: target });
    await system.settle();
    system.exit(target, 'kill');
    await system.settle();
    expect(w.downs.map((d) => d.reason)).toEqual(['killed']);
    system.exit(w.ref, 'kill');
  });

  it('monitoring a dead actor gives DOWN noproc at once', async () => {
    const system = testSystem();
    const w = watcher(system);
    const dead = system.spawn(() => {});
    system.exit(dead, 'kill');
    system.send(w.ref, { watch: dead });
    await system.settle();
    expect(w.downs).toHaveLength(1);
    expect(w.downs[0]!.reason).toBe('noproc');
    expect(w.downs[0]!.ref).toBe(dead);
    expect(w.downs[0]!.monitor).toBe(w.monitors[0]);
    expect(system.info(w.ref)?.monitors).toEqual([]);
    system.exit(w.ref, 'kill');
  });

  it('each monitor is separate: two monitors give two DOWNs with distinct refs', async () => {
    const system = testSystem();
    const w = watcher(system);
    const target = system.spawn(() => {});
    system.send(w.ref, { watch: target });
    system.send(w.ref, { watch: target });
    await system.settle();
    expect(new Set(w.monitors).size).toBe(2);
    expect(system.info(w.ref)?.monitors).toEqual([target, target]);
    system.exit(target, 'shutdown');
    await system.settle();
    expect(w.downs.map((d) => d.monitor).sort()).toEqual([...w.monitors].sort());
    expect(system.info(w.ref)?.monitors).toEqual([]);
    system.exit(w.ref, 'kill');
  });

  it('demonitor: no DOWN is delivered afterwards', async () => {
    const system = testSystem();
    const w = watcher(system);
    const target = system.spawn(() => {});
    system.send(w.ref, { watch: target });
    await system.settle();
    system.send(w.ref, { forget: w.monitors[0]! });
    await system.settle();
    expect(system.info(target)?.monitoredBy).toEqual([]);
    expect(system.info(w.ref)?.monitors).toEqual([]);
    system.exit(target, 'shutdown');
    await system.settle();
    expect(w.downs).toEqual([]);
    system.exit(w.ref, 'kill');
  });

  it('demonitor with flush removes a DOWN already queued; without flush it is still handled', async () => {
    const system = testSystem();
    const handled: unknown[] = [];
    const run = (flush: boolean) =>
      system.spawn<unknown>((message, ctx) => {
        if (message !== 'go') {
          handled.push(message);
          return;
        }
        const target = ctx.spawn(() => {});
        const monitor = ctx.monitor(target);
        ctx.exit(target, 'kill'); // DOWN is queued now, while this handler still runs
        ctx.send(ctx.self, 'after');
        ctx.demonitor(monitor, flush);
      });
    const flushing = run(true);
    system.send(flushing, 'go');
    await system.settle();
    expect(handled).toEqual(['after']);

    handled.length = 0;
    const keeping = run(false);
    system.send(keeping, 'go');
    await system.settle();
    expect(handled).toHaveLength(2);
    expect(handled[0]).toBeInstanceOf(DownMessage);
    expect(handled[1]).toBe('after');
    system.exit(flushing, 'kill');
    system.exit(keeping, 'kill');
  });

  it('flush removes only the DOWN of that monitor', async () => {
    const system = testSystem();
    const handled: unknown[] = [];
    let kept: MonitorRef | undefined;
    const actor = system.spawn<unknown>((message, ctx) => {
      if (message !== 'go') {
        handled.push(message);
        return;
      }
      const a = ctx.spawn(() => {});
      const b = ctx.spawn(() => {});
      const ma = ctx.monitor(a);
      kept = ctx.monitor(b);
      ctx.exit(a, 'kill');
      ctx.exit(b, 'kill');
      ctx.demonitor(ma, true);
    });
    system.send(actor, 'go');
    await system.settle();
    expect(handled).toHaveLength(1);
    expect((handled[0] as DownMessage).monitor).toBe(kept);
    system.exit(actor, 'kill');
  });

  it('monitors from outside an actor: watch and exited', async () => {
    const system = testSystem();
    const target = system.spawn(() => {});
    const reasons: Array<[ExitReason, Ref]> = [];
    system.watch(target, (reason, ref) => reasons.push([reason, ref]));
    const other = system.spawn(() => {});
    const unwatched: ExitReason[] = [];
    const unwatch = system.watch(other, (reason) => unwatched.push(reason));
    unwatch();
    const exited = system.exited(target);
    system.exit(target, 'shutdown');
    system.exit(other, 'shutdown');
    expect(reasons).toEqual([['shutdown', target]]);
    expect(unwatched).toEqual([]);
    expect(await exited).toBe('shutdown');
    expect(await system.exited(target)).toBe('noproc');
  });

  it('a monitor is not a link: the watcher survives any exit of the target', async () => {
    const system = testSystem();
    const w = watcher(system);
    const target = system.spawn(() => {});
    system.send(w.ref, { watch: target });
    await system.settle();
    const exits = exitLog(system, w.ref);
    system.exit(target, new Error('crash'));
    await system.settle();
    expect(exits.size).toBe(0);
    expect(w.downs).toHaveLength(1);
    system.exit(w.ref, 'kill');
  });
});
