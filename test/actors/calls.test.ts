import { describe, expect, it } from 'vitest';
import {
  CallRequest,
  CalleeExited,
  CallingSelf,
  CallTimeout,
  DEFAULT_CALL_TIMEOUT_MS,
  InvalidOption,
  NoProc,
  SimulatedClock,
  shutdownWith,
  type Ref,
} from '../../src/actors/index.js';
import { testSystem } from '../support/systems.js';

/** A server that answers `{ double: n }`, holds `'hold'` requests and answers them on `'release'`. */
function server(system: ReturnType<typeof testSystem>) {
  const held: CallRequest[] = [];
  const ref = system.spawn<unknown>((message, ctx) => {
    if (message instanceof CallRequest) {
      const request = message.request as { double?: number } | string;
      if (request === 'hold') held.push(message);
      else if (request === 'ignore') return;
      else if (request === 'crash') throw new Error('server crashed');
      else if (request === 'stop') ctx.stop(shutdownWith('asked to'));
      else if (typeof request === 'object' && request.double !== undefined) message.reply(request.double * 2);
    } else if (message === 'release') {
      for (const call of held.splice(0)) call.reply(`released ${call.open}`);
    }
  });
  return { ref, held };
}

describe('call', () => {
  it('sends a request and resolves with the reply', async () => {
    const system = testSystem();
    const { ref } = server(system);
    expect(await system.call(ref, { double: 21 })).toBe(42);
    expect(system.timerCount).toBe(0);
    system.exit(ref, 'kill');
  });

  it('works from inside an actor', async () => {
    const system = testSystem();
    const { ref } = server(system);
    const results: unknown[] = [];
    const client = system.spawn<number>(async (message, ctx) => {
      results.push(await ctx.call(ref, { double: message }));
    });
    system.send(client, 1);
    system.send(client, 2);
    await new Promise<void>((resolve) => {
      const check = () => (results.length === 2 ? resolve() : setImmediate(check));
      check();
    });
    expect(results).toEqual([2, 4]);
    system.exit(ref, 'kill');
    system.exit(client, 'kill');
  });

  it('times out after 5,000 ms by default with a typed CallTimeout', async () => {
    expect(DEFAULT_CALL_TIMEOUT_MS).toBe(5_000);
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const { ref } = server(system);
    let outcome: unknown = 'pending';
    system.call(ref, 'ignore').then(
      (value) => (outcome = value),
      (error: unknown) => (outcome = error),
    );
    await system.settle();
    clock.advance(4_999);
    await system.settle();
    expect(outcome).toBe('pending');
    clock.advance(1);
    await system.settle();
    expect(outcome).toBeInstanceOf(CallTimeout);
    const timeout = outcome as CallTimeout;
    expect(timeout.code).toBe('ACTOR_CALL_TIMEOUT');
    expect(timeout.timeoutMs).toBe(5_000);
    expect(timeout.target).toBe(ref);
    expect(system.timerCount).toBe(0);
    system.exit(ref, 'kill');
  });

  it('honours a per-call timeout and the system default option', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock, callTimeoutMs: 200 });
    const { ref } = server(system);
    const byDefault = system.call(ref, 'ignore');
    const explicit = system.call(ref, 'ignore', 50);
    const settled: string[] = [];
    byDefault.catch(() => settled.push('default'));
    explicit.catch(() => settled.push('explicit'));
    clock.advance(50);
    await system.settle();
    expect(settled).toEqual(['explicit']);
    clock.advance(150);
    await system.settle();
    expect(settled).toEqual(['explicit', 'default']);
    await expect(byDefault).rejects.toMatchObject({ timeoutMs: 200 });
    await expect(explicit).rejects.toMatchObject({ timeoutMs: 50 });
    system.exit(ref, 'kill');
  });

  it('rejects with NoProc for a dead ref or an unregistered name, arming no timer', async () => {
    const system = testSystem();
    const { ref } = server(system);
    system.exit(ref, 'kill');
    await expect(system.call(ref, { double: 1 })).rejects.toBeInstanceOf(NoProc);
    const byName = system.call('nobody', { double: 1 });
    await expect(byName).rejects.toBeInstanceOf(NoProc);
    await expect(byName).rejects.toMatchObject({ code: 'ACTOR_NOPROC', target: 'nobody' });
    expect(system.timerCount).toBe(0);
  });

  it('rejects with CalleeExited carrying the reason when the callee crashes on the request', async () => {
    const system = testSystem();
    const { ref } = server(system);
    const error = await system.call(ref, 'crash').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CalleeExited);
    const exited = error as CalleeExited;
    expect(exited.code).toBe('ACTOR_CALLEE_EXITED');
    expect(exited.target).toBe(ref);
    expect((exited.reason as Error).message).toBe('server crashed');
    expect(exited.cause).toBe(exited.reason);
    expect(system.timerCount).toBe(0);
  });

  it('rejects with CalleeExited when the callee stops before replying', async () => {
    const system = testSystem();
    const { ref } = server(system);
    const error = await system.call(ref, 'stop').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CalleeExited);
    expect((error as CalleeExited).reason).toEqual({ shutdown: 'asked to' });
  });

  it('fails every call a callee holds when it is killed mid-call', async () => {
    const system = testSystem();
    const { ref, held } = server(system);
    const calls = [system.call(ref, 'hold'), system.call(ref, 'hold'), system.call(ref, 'hold')];
    await system.settle();
    expect(held).toHaveLength(3);
    expect(system.timerCount).toBe(3);
    system.exit(ref, 'kill');
    const errors = await Promise.all(calls.map((call) => call.catch((e: unknown) => e)));
    for (const error of errors) {
      expect(error).toBeInstanceOf(CalleeExited);
      expect((error as CalleeExited).reason).toBe('killed');
    }
    expect(system.timerCount).toBe(0);
  });

  it('a callee dying from a link mid-call reports the propagated reason', async () => {
    const system = testSystem();
    const { ref } = server(system);
    const partner = system.spawn(() => {}, { link: ref });
    const call = system.call(ref, 'hold');
    await system.settle();
    const reason = new Error('partner failed');
    system.exit(partner, reason);
    await expect(call).rejects.toMatchObject({ reason });
  });

  it('a server can keep the request and reply later from another handler', async () => {
    const system = testSystem();
    const { ref, held } = server(system);
    const pending = system.call(ref, 'hold');
    await system.settle();
    expect(held).toHaveLength(1);
    expect(held[0]!.open).toBe(true);
    expect(held[0]!.request).toBe('hold');
    expect(held[0]!.callee).toBe(ref);
    // Other requests are served meanwhile.
    expect(await system.call(ref, { double: 5 })).toBe(10);
    const call = held[0]!;
    system.send(ref, 'release');
    expect(await pending).toBe('released true');
    expect(call.open).toBe(false);
    expect(system.timerCount).toBe(0);
    system.exit(ref, 'kill');
  });

  it('a second reply, or a reply after the timeout, is ignored', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const { ref, held } = server(system);
    const late = system.call(ref, 'hold', 100);
    await system.settle();
    clock.advance(100);
    await expect(late).rejects.toBeInstanceOf(CallTimeout);
    expect(held[0]!.open).toBe(false);
    held[0]!.reply('too late'); // no effect, no throw

    const twice = system.call(ref, 'hold');
    await system.settle();
    held[1]!.reply('first');
    held[1]!.reply('second');
    expect(await twice).toBe('first');
    system.exit(ref, 'kill');
  });

  it('10,000 outstanding calls share one native timer and all time out on advance', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const { ref } = server(system);
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 10_000; i++) calls.push(system.call(ref, 'ignore'));
    await system.settle();
    expect(system.timerCount).toBe(10_000);
    expect(clock.pendingTimers).toBeLessThanOrEqual(1);
    clock.advance(4_999);
    await system.settle();
    expect(system.timerCount).toBe(10_000);
    clock.advance(1);
    const outcomes = await Promise.allSettled(calls);
    expect(outcomes.every((o) => o.status === 'rejected' && o.reason instanceof CallTimeout)).toBe(true);
    expect(system.timerCount).toBe(0);
    expect(clock.pendingTimers).toBeLessThanOrEqual(1);
    system.exit(ref, 'kill');
  });

  it('calls with many different timeouts still arm a single native timer', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const { ref } = server(system);
    const order: number[] = [];
    const calls: Promise<unknown>[] = [];
    for (const timeout of [500, 100, 300, 100, 200, 400]) {
      calls.push(system.call(ref, 'ignore', timeout).catch(() => void order.push(timeout)));
      expect(clock.pendingTimers).toBeLessThanOrEqual(1);
    }
    for (let t = 0; t < 5; t++) {
      clock.advance(100);
      await system.settle();
      expect(clock.pendingTimers).toBeLessThanOrEqual(1);
    }
    await Promise.all(calls);
    expect(order).toEqual([100, 100, 200, 300, 400, 500]);
    system.exit(ref, 'kill');
  });

  it('replied calls release their timeout at once', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const { ref } = server(system);
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => system.call(ref, { double: i })));
    expect(replies[99]).toBe(198);
    expect(system.timerCount).toBe(0);
    system.exit(ref, 'kill');
  });

  it('calling an actor that exits as the call is made gives CalleeExited, never a hang', async () => {
    const system = testSystem();
    let target: Ref | undefined;
    const results: unknown[] = [];
    const caller = system.spawn<string>(async (_m, ctx) => {
      target = ctx.spawn(() => {
        throw new Error('dies on first message');
      });
      results.push(await ctx.call(target, 'x').catch((e: unknown) => e));
    });
    system.send(caller, 'go');
    await new Promise<void>((resolve) => {
      const check = () => (results.length === 1 ? resolve() : setImmediate(check));
      check();
    });
    expect(results[0]).toBeInstanceOf(CalleeExited);
    expect(system.isAlive(target!)).toBe(false);
    system.exit(caller, 'kill');
  });

  it('an invalid timeout throws in the caller at once and delivers nothing', async () => {
    const system = testSystem();
    const received: unknown[] = [];
    const ref = system.spawn<unknown>((message) => void received.push(message));
    for (const timeoutMs of [-1, Number.NaN]) {
      expect(() => system.call(ref, 'x', timeoutMs)).toThrow(InvalidOption);
      expect(() => system.callFor(ref, 'x', timeoutMs, () => {}, () => {})).toThrow(InvalidOption);
    }
    await system.settle();
    expect(received).toEqual([]);
    expect(system.timerCount).toBe(0);
    system.exit(ref, 'kill');
  });

  it('a call to itself fails with CallingSelf (before its timeout is checked), as a promise or through reject', async () => {
    const system = testSystem();
    const results: unknown[] = [];
    const ref = system.spawn<string>(async (_message, ctx) => {
      const call = ctx.call(ctx.self, 'x', -1);
      system.callFor(ctx.self, 'x', -1, (value) => results.push(value), (error) => results.push(error));
      results.push(await call.catch((e: unknown) => e));
    });
    system.send(ref, 'go');
    await system.settle();
    expect(results).toHaveLength(2);
    for (const result of results) expect(result).toBeInstanceOf(CallingSelf);
    system.exit(ref, 'kill');
  });
});
