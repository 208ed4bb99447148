import { describe, expect, it } from 'vitest';
import { InvalidOption, type ActorBehaviour } from '../../src/actors/index.js';
import { eventually, testSystem } from '../support/systems.js';
import { deferred, recorder, type Deferred } from './helpers.js';

describe('execution', () => {
  it('handles one message at a time, in arrival order, even with async handlers', async () => {
    const system = testSystem();
    let active = 0;
    let maxActive = 0;
    const order: number[] = [];
    const ref = system.spawn<number>(async (message) => {
      active++;
      maxActive = Math.max(maxActive, active);
      // Yield a few times, so an overlapping handler would get a chance to start.
      for (let i = 0; i < 3; i++) await Promise.resolve();
      await new Promise((resolve) => setImmediate(resolve));
      order.push(message as number);
      active--;
    });
    for (let i = 0; i < 20; i++) system.send(ref, i);
    await eventually(() => order.length === 20);
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(maxActive).toBe(1);
    system.exit(ref, 'kill');
  });

  it('waits for an async handler to settle before delivering the next message', async () => {
    const system = testSystem();
    const gates: Deferred[] = [deferred(), deferred()];
    const log: string[] = [];
    const ref = system.spawn<number>(async (message) => {
      log.push(`start ${message}`);
      await gates[message as number]!.promise;
      log.push(`end ${message}`);
    });
    system.send(ref, 0);
    system.send(ref, 1);
    await system.settle();
    expect(log).toEqual(['start 0']);
    expect(system.info(ref)?.mailboxLength).toBe(1);
    gates[1]!.resolve(); // the second gate opening early changes nothing
    await system.settle();
    expect(log).toEqual(['start 0']);
    gates[0]!.resolve();
    await system.settle();
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1']);
    system.exit(ref, 'kill');
  });

  it('send only enqueues: no handler runs in the sender stack', async () => {
    const system = testSystem();
    const { ref, seen } = recorder(system);
    system.send(ref, 'from outside');
    expect(seen).toEqual([]);
    expect(system.info(ref)?.mailboxLength).toBe(1);

    const log: string[] = [];
    let inSender = false;
    const receiver = system.spawn<string>((message) => {
      log.push(`receiver got ${message}${inSender ? ' inside the sender' : ''}`);
    });
    const sender = system.spawn<string>((message, ctx) => {
      inSender = true;
      ctx.send(receiver, message);
      ctx.send(receiver, `${message}-2`);
      log.push('sender done');
      inSender = false;
    });
    system.send(sender, 'hello');
    await system.settle();
    expect(log).toEqual(['sender done', 'receiver got hello', 'receiver got hello-2']);
    expect(seen).toEqual(['from outside']);
    for (const r of [ref, receiver, sender]) system.exit(r, 'kill');
  });

  it('a message an actor sends to itself is handled after the current one', async () => {
    const system = testSystem();
    const log: string[] = [];
    const ref = system.spawn<string>((message, ctx) => {
      log.push(`begin ${message}`);
      if (message === 'first') ctx.send(ctx.self, 'second');
      log.push(`end ${message}`);
    });
    system.send(ref, 'first');
    await system.settle();
    expect(log).toEqual(['begin first', 'end first', 'begin second', 'end second']);
    system.exit(ref, 'kill');
  });

  it('a synchronously returning handler works, and so does a plain thenable', async () => {
    const system = testSystem();
    const log: string[] = [];
    const sync = system.spawn<string>((message) => {
      log.push(`sync ${message}`);
    });
    // Not a Promise: only a `then` method, as some libraries return.
    const thenable = system.spawn<string>(
      (message) =>
        ({
          then(onFulfilled: () => void) {
            log.push(`thenable ${message}`);
            setImmediate(onFulfilled);
          },
        }) as unknown as PromiseLike<void>,
    );
    for (const m of ['a', 'b']) {
      system.send(sync, m);
      system.send(thenable, m);
    }
    await eventually(() => log.length === 4);
    expect(log.filter((l) => l.startsWith('sync'))).toEqual(['sync a', 'sync b']);
    expect(log.filter((l) => l.startsWith('thenable'))).toEqual(['thenable a', 'thenable b']);
    expect(system.info(sync)?.messagesHandled).toBe(2);
    expect(system.info(thenable)?.messagesHandled).toBe(2);
    system.exit(sync, 'kill');
    system.exit(thenable, 'kill');
  });

  it('runs init (sync or async) before the first message', async () => {
    const system = testSystem();
    const log: string[] = [];
    const gate = deferred();
    const behaviour: ActorBehaviour<string> = {
      name: 'initialised',
      async init() {
        log.push('init start');
        await gate.promise;
        log.push('init end');
      },
      handle(_ctx, message) {
        log.push(`handle ${String(message)}`);
      },
    };
    const ref = system.spawn(behaviour);
    system.send(ref, 'm1');
    await system.settle();
    expect(log).toEqual(['init start']);
    expect(system.info(ref)?.status).toBe('initializing');
    gate.resolve();
    await system.settle();
    expect(log).toEqual(['init start', 'init end', 'handle m1']);
    system.exit(ref, 'kill');
  });

  it('yields to the event loop while a flood is processed (small budget)', async () => {
    const system = testSystem({ budget: 8, batch: 4 });
    let handled = 0;
    let handledWhenImmediateRan = -1;
    const ref = system.spawn<number>(() => {
      if (handled++ === 0) setImmediate(() => (handledWhenImmediateRan = handled));
    });
    for (let i = 0; i < 1_000; i++) system.send(ref, i);
    await system.settle();
    expect(handled).toBe(1_000);
    expect(handledWhenImmediateRan).toBeGreaterThan(0);
    expect(handledWhenImmediateRan).toBeLessThan(1_000);
    // At most one budget per turn of the event loop.
    expect(handledWhenImmediateRan).toBeLessThanOrEqual(16);
    system.exit(ref, 'kill');
  });

  it('with a budget larger than the flood, the flood finishes before the event loop turns', async () => {
    const system = testSystem();
    let handled = 0;
    let handledWhenImmediateRan = -1;
    const ref = system.spawn<number>(() => {
      if (handled++ === 0) setImmediate(() => (handledWhenImmediateRan = handled));
    });
    for (let i = 0; i < 1_000; i++) system.send(ref, i);
    await eventually(() => handledWhenImmediateRan >= 0);
    expect(handledWhenImmediateRan).toBe(1_000);
    system.exit(ref, 'kill');
  });

  it('I/O callbacks (timers) are not starved by a flood that keeps refilling itself', async () => {
    const system = testSystem({ budget: 64, batch: 16 });
    let handled = 0;
    let stop = false;
    const ref = system.spawn<string>((_message, ctx) => {
      handled++;
      if (!stop) ctx.send(ctx.self, 'again');
    });
    system.send(ref, 'again');
    await new Promise((resolve) => setTimeout(resolve, 5));
    stop = true;
    await system.settle();
    expect(handled).toBeGreaterThan(64);
    system.exit(ref, 'kill');
  });

  it('shares the loop between ready actors in batches', async () => {
    const system = testSystem({ batch: 4 });
    const order: string[] = [];
    const a = system.spawn<number>((message) => void order.push(`a${message}`));
    const b = system.spawn<number>((message) => void order.push(`b${message}`));
    for (let i = 0; i < 8; i++) {
      system.send(a, i);
      system.send(b, i);
    }
    await system.settle();
    expect(order).toEqual([
      ...['a0', 'a1', 'a2', 'a3'],
      ...['b0', 'b1', 'b2', 'b3'],
      ...['a4', 'a5', 'a6', 'a7'],
      ...['b4', 'b5', 'b6', 'b7'],
    ]);
    system.exit(a, 'kill');
    system.exit(b, 'kill');
  });

  it('validates budget and batch', () => {
    expect(() => testSystem({ budget: 0 })).toThrow(InvalidOption);
    expect(() => testSystem({ batch: 1.5 })).toThrow(expect.objectContaining({ option: 'batch' }));
  });
});
