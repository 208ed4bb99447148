import { describe, expect, it } from 'vitest';
import type { ActorContext, ActorStatus } from '../../src/actors/index.js';
import { ActorCell } from '../../src/actors/actor-cell.js';
import { testSystem } from '../support/systems.js';
import { deferred } from './helpers.js';

describe('process info', () => {
  it('describes a fresh actor', () => {
    const system = testSystem();
    const parent = system.spawn(() => {});
    const ref = system.spawn(() => {});
    const info = system.info(ref)!;
    expect(info).toMatchObject({
      ref,
      name: undefined,
      behaviour: 'actor',
      status: 'waiting',
      mailboxLength: 0,
      mailboxCapacity: 100_000,
      messagesHandled: 0,
      messagesDropped: 0,
      links: [],
      monitors: [],
      monitoredBy: [],
      trapExit: false,
      timers: 0,
      parent: undefined,
    });
    expect(info.memoryEstimate).toBeGreaterThan(0);
    system.exit(ref, 'kill');
    system.exit(parent, 'kill');
  });

  it('is undefined once the actor has exited', () => {
    const system = testSystem();
    const ref = system.spawn(() => {});
    system.exit(ref, 'kill');
    expect(system.info(ref)).toBeUndefined();
  });

  it('names the behaviour: the behaviour name, the function name, or actor', () => {
    const system = testSystem();
    function namedHandler(): void {}
    const a = system.spawn({ name: 'cache', handle() {} });
    const b = system.spawn(namedHandler);
    const c = system.spawn({ handle() {} });
    expect(system.info(a)?.behaviour).toBe('cache');
    expect(system.info(b)?.behaviour).toBe('namedHandler');
    expect(system.info(c)?.behaviour).toBe('actor');
    for (const ref of [a, b, c]) system.exit(ref, 'kill');
  });

  it('reports status through the life of an actor', async () => {
    const system = testSystem();
    const initGate = deferred();
    const handleGate = deferred();
    const terminateGate = deferred();
    const statuses: ActorStatus[] = [];
    let context: ActorContext | undefined;
    const ref = system.spawn<string>({
      async init(ctx) {
        context = ctx;
        statuses.push(ctx.system.info(ctx.self)!.status);
        await initGate.promise;
      },
      async handle(ctx, message) {
        statuses.push(ctx.system.info(ctx.self)!.status);
        if (message === 'block') await handleGate.promise;
        if (message === 'stop') ctx.stop();
      },
      async terminate() {
        await terminateGate.promise;
      },
    });
    const status = () => system.info(ref)?.status;
    expect(status()).toBe('initializing'); // init not run yet
    await system.settle();
    expect(status()).toBe('initializing'); // async init in flight
    initGate.resolve();
    await system.settle();
    expect(status()).toBe('waiting');
    system.send(ref, 'block');
    expect(status()).toBe('runnable');
    await system.settle();
    expect(status()).toBe('running'); // awaiting inside its handler
    handleGate.resolve();
    await system.settle();
    expect(status()).toBe('waiting');
    system.send(ref, 'stop');
    await system.settle();
    expect(status()).toBe('exiting'); // async terminate in flight
    terminateGate.resolve();
    await system.exited(ref);
    expect(status()).toBeUndefined();
    expect((context as ActorCell).status).toBe('exited');
    expect(statuses).toEqual(['initializing', 'running', 'running']);
  });

  it('counts queued and handled messages', async () => {
    const system = testSystem();
    const ref = system.spawn(() => {});
    for (let i = 0; i < 5; i++) system.send(ref, i);
    expect(system.info(ref)?.mailboxLength).toBe(5);
    expect(system.info(ref)?.messagesHandled).toBe(0);
    await system.settle();
    expect(system.info(ref)?.mailboxLength).toBe(0);
    expect(system.info(ref)?.messagesHandled).toBe(5);
    system.exit(ref, 'kill');
  });

  it('lists links, monitors (targets) and monitoredBy (watchers), trapExit, parent and name', async () => {
    const system = testSystem();
    const target = system.spawn(() => {});
    let child: ReturnType<typeof system.spawn> | undefined;
    const actor = system.spawn<string>(
      (_m, ctx) => {
        ctx.link(target);
        ctx.monitor(target);
        child = ctx.spawn(() => {});
        ctx.monitor(child);
      },
      { name: 'observer', trapExit: true },
    );
    system.send(actor, 'go');
    await system.settle();
    const info = system.info(actor)!;
    expect(info.name).toBe('observer');
    expect(info.trapExit).toBe(true);
    expect(info.links).toEqual([target]);
    expect(info.monitors).toEqual([target, child]);
    expect(info.monitoredBy).toEqual([]);
    expect(system.info(target)?.links).toEqual([actor]);
    expect(system.info(target)?.monitoredBy).toEqual([actor]);
    expect(system.info(child!)?.parent).toBe(actor);
    // Watchers from outside any actor are not actors: not listed.
    system.watch(target, () => {});
    expect(system.info(target)?.monitoredBy).toEqual([actor]);
    for (const ref of [actor, target, child!]) system.exit(ref, 'kill');
  });

  it('estimates memory from the fixed cost, the mailbox, links, monitors and timers', async () => {
    const system = testSystem();
    const ref = system.spawn(() => {});
    const other = system.spawn(() => {});
    const base = system.info(ref)!.memoryEstimate;
    system.send(ref, 'a');
    system.send(ref, 'b');
    const withMessages = system.info(ref)!.memoryEstimate;
    expect(withMessages).toBeGreaterThan(base);
    await system.settle();
    expect(system.info(ref)!.memoryEstimate).toBe(base);
    const linked = system.spawn(() => {}, { link: ref });
    const withLink = system.info(ref)!.memoryEstimate;
    expect(withLink).toBeGreaterThan(base);
    const big = system.spawn(() => {});
    for (let i = 0; i < 1_000; i++) system.send(big, i);
    expect(system.info(big)!.memoryEstimate).toBeGreaterThan(withMessages);
    for (const r of [ref, other, linked, big]) system.exit(r, 'kill');
  });

  it('processes() lists live actors oldest first; actorCount follows', () => {
    const system = testSystem();
    const a = system.spawn(() => {});
    const b = system.spawn(() => {});
    const c = system.spawn(() => {});
    expect(system.processes()).toEqual([a, b, c]);
    expect(system.actorCount).toBe(3);
    system.exit(b, 'kill');
    expect(system.processes()).toEqual([a, c]);
    expect(system.actorCount).toBe(2);
    system.exit(a, 'kill');
    system.exit(c, 'kill');
  });
});
