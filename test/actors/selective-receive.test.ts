import { describe, expect, it } from 'vitest';
import {
  ActorErrorCode,
  DownMessage,
  ExitMessage,
  NotInActor,
  RECEIVE_TIMEOUT,
  ReceivePending,
  SimulatedClock,
  type ActorContext,
} from '../../src/actors/index.js';
import { testSystem } from '../support/systems.js';
import { deferred, exitLog, withContext } from './helpers.js';

type Tagged = { tag: string; n: number };
const tagged = (tag: string, n: number): Tagged => ({ tag, n });
const isTag =
  (tag: string) =>
  (message: unknown): boolean =>
    typeof message === 'object' && message !== null && (message as Tagged).tag === tag;

describe('selective receive', () => {
  it('takes the first matching queued message and leaves the others in order', async () => {
    const system = testSystem();
    const handled: unknown[] = [];
    let received: unknown;
    const ref = system.spawn<unknown>(async (message, ctx) => {
      if (message === 'start') received = await ctx.receive(isTag('b'));
      else handled.push(message);
    });
    system.send(ref, 'start');
    system.send(ref, tagged('a', 1));
    system.send(ref, tagged('a', 2));
    system.send(ref, tagged('b', 1));
    system.send(ref, tagged('a', 3));
    system.send(ref, tagged('b', 2));
    await system.settle();
    expect(received).toEqual(tagged('b', 1));
    expect(handled).toEqual([tagged('a', 1), tagged('a', 2), tagged('a', 3), tagged('b', 2)]);
    system.exit(ref, 'kill');
  });

  it('waits for a matching message; non-matching arrivals queue up in order meanwhile', async () => {
    const system = testSystem();
    const handled: unknown[] = [];
    const log: string[] = [];
    const ref = system.spawn<unknown>(async (message, ctx) => {
      if (message === 'start') {
        log.push('waiting');
        const reply = await ctx.receive(isTag('reply'));
        log.push(`got ${(reply as Tagged).n}`);
      } else handled.push(message);
    });
    system.send(ref, 'start');
    await system.settle();
    expect(log).toEqual(['waiting']);
    system.send(ref, tagged('x', 1));
    system.send(ref, tagged('x', 2));
    await system.settle();
    expect(handled).toEqual([]);
    expect(system.info(ref)?.mailboxLength).toBe(2);
    system.send(ref, tagged('reply', 7));
    system.send(ref, tagged('x', 3));
    await system.settle();
    expect(log).toEqual(['waiting', 'got 7']);
    expect(handled).toEqual([tagged('x', 1), tagged('x', 2), tagged('x', 3)]);
    system.exit(ref, 'kill');
  });

  it('returns RECEIVE_TIMEOUT after the timeout and keeps every message in order', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const handled: unknown[] = [];
    const results: unknown[] = [];
    const ref = system.spawn<unknown>(async (message, ctx) => {
      if (message === 'start') results.push(await ctx.receive(isTag('never'), 100));
      else handled.push(message);
    });
    system.send(ref, 'start');
    await system.settle();
    system.send(ref, tagged('x', 1));
    clock.advance(99);
    system.send(ref, tagged('x', 2));
    await system.settle();
    expect(results).toEqual([]);
    expect(system.timerCount).toBe(1);
    clock.advance(1);
    await system.settle();
    expect(results).toEqual([RECEIVE_TIMEOUT]);
    expect(handled).toEqual([tagged('x', 1), tagged('x', 2)]);
    expect(system.timerCount).toBe(0);
    system.exit(ref, 'kill');
  });

  it('a match before the timeout cancels the timeout timer', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const results: unknown[] = [];
    const ref = system.spawn<unknown>(async (message, ctx) => {
      if (message === 'start') results.push(await ctx.receive(isTag('ok'), 1_000));
    });
    system.send(ref, 'start');
    await system.settle();
    expect(system.timerCount).toBe(1);
    clock.advance(500);
    system.send(ref, tagged('ok', 1));
    await system.settle();
    expect(results).toEqual([tagged('ok', 1)]);
    expect(system.timerCount).toBe(0);
    clock.advance(1_000);
    await system.settle();
    expect(results).toEqual([tagged('ok', 1)]);
    system.exit(ref, 'kill');
  });

  it('a timeout of 0 polls: an already queued match, else RECEIVE_TIMEOUT at once', async () => {
    const system = testSystem();
    const results: unknown[] = [];
    const ref = system.spawn<unknown>(async (message, ctx) => {
      if (message !== 'start') return;
      results.push(await ctx.receive(isTag('q'), 0));
      results.push(await ctx.receive(isTag('q'), 0));
    });
    system.send(ref, 'start');
    system.send(ref, tagged('q', 1));
    await system.settle();
    expect(results).toEqual([tagged('q', 1), RECEIVE_TIMEOUT]);
    expect(system.timerCount).toBe(0);
    system.exit(ref, 'kill');
  });

  it('can pick kernel signals (EXIT, DOWN) out of the mailbox', async () => {
    const system = testSystem();
    const other = system.spawn(() => {});
    const linked = system.spawn(() => {});
    let down: unknown;
    let exit: unknown;
    const ref = system.spawn<unknown>(
      async (message, ctx) => {
        if (message !== 'start') return;
        ctx.link(linked);
        const monitor = ctx.monitor(other);
        system.exit(other, 'shutdown');
        system.exit(linked, 'kill');
        exit = await ctx.receive((m) => m instanceof ExitMessage);
        down = await ctx.receive((m) => m instanceof DownMessage && m.monitor === monitor);
      },
      { trapExit: true },
    );
    system.send(ref, 'start');
    await system.settle();
    expect(down).toBeInstanceOf(DownMessage);
    expect((down as DownMessage).reason).toBe('shutdown');
    expect(exit).toBeInstanceOf(ExitMessage);
    expect((exit as ExitMessage).reason).toBe('killed');
    system.exit(ref, 'kill');
  });

  it('works inside init, before the first message', async () => {
    const system = testSystem();
    const handled: unknown[] = [];
    let config: unknown;
    const ref = system.spawn<unknown>({
      async init(ctx) {
        config = await ctx.receive(isTag('config'));
      },
      handle(_ctx, message) {
        handled.push(message);
      },
    });
    system.send(ref, tagged('early', 1));
    system.send(ref, tagged('config', 1));
    await system.settle();
    expect(config).toEqual(tagged('config', 1));
    expect(handled).toEqual([tagged('early', 1)]);
    system.exit(ref, 'kill');
  });

  it('throws NotInActor when called outside the actor own callback', async () => {
    const system = testSystem();
    const { ref, ctx } = await withContext(system);
    await system.settle();
    let thrown: unknown;
    try {
      void ctx.receive(() => true);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(NotInActor);
    expect((thrown as NotInActor).code).toBe(ActorErrorCode.NotInActor);
    // Also from a timer or promise continuation that runs after the callback settled.
    let captured: ActorContext | undefined;
    const sync = system.spawn((_m: unknown, c) => void (captured = c));
    system.send(sync, 'go');
    await system.settle();
    expect(() => captured!.receive(() => true)).toThrow(NotInActor);
    system.exit(ref, 'kill');
    system.exit(sync, 'kill');
  });

  it('allows one pending receive at a time (ReceivePending)', async () => {
    const system = testSystem();
    let second: unknown;
    const ref = system.spawn<unknown>((message, ctx) => {
      if (message !== 'start') return;
      const first = ctx.receive(isTag('never'));
      try {
        void ctx.receive(isTag('never'));
      } catch (error) {
        second = error;
      }
      return first.then(() => undefined);
    });
    system.send(ref, 'start');
    await system.settle();
    expect(second).toBeInstanceOf(ReceivePending);
    system.exit(ref, 'kill');
  });

  it('a pending receive is released at exit: no timer is left behind', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const ref = system.spawn<unknown>(async (message, ctx) => {
      if (message === 'start') await ctx.receive(isTag('never'), 60_000);
    });
    system.send(ref, 'start');
    await system.settle();
    expect(system.timerCount).toBe(1);
    system.exit(ref, 'kill');
    expect(system.timerCount).toBe(0);
  });

  it('a predicate that throws fails the receiving actor, never the sender', async () => {
    const system = testSystem();
    const boom = new Error('bad predicate');
    const receiver = system.spawn<unknown>(async (message, ctx) => {
      if (message === 'start')
        await ctx.receive((m) => {
          if (m === 'poison') throw boom;
          return false;
        });
    });
    system.send(receiver, 'start');
    await system.settle();
    let senderFinished = false;
    const sender = system.spawn<unknown>((_message, ctx) => {
      ctx.send(receiver, 'poison');
      senderFinished = true;
    });
    const exits = exitLog(system, receiver, sender);
    system.send(sender, 'go');
    await system.settle();
    expect(senderFinished).toBe(true);
    expect(system.isAlive(sender)).toBe(true);
    expect(exits.get(receiver)).toBe(boom);
    expect(exits.has(sender)).toBe(false);
    system.exit(sender, 'kill');
  });


  it('a receive by a handler that outlived its actor arms no timer', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const gate = deferred();
    let settled = false;
    const ref = system.spawn<unknown>(async (_message, ctx) => {
      await gate.promise;
      await ctx.receive(() => true, 60_000);
      settled = true;
    });
    system.send(ref, 'go');
    await system.settle();
    system.exit(ref, 'kill');
    gate.resolve();
    await gate.promise;
    await system.settle();
    expect(system.timerCount).toBe(0);
    expect(settled).toBe(false);
  });
});
