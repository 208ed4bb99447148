import { describe, expect, it } from 'vitest';
import { SimulatedClock, type ActorContext, type ExitReason, type TimerEntry } from '../../src/actors/index.js';
import { ActorCell } from '../../src/actors/actor-cell.js';
import { testSystem } from '../support/systems.js';
import { deferred, recorder, withContext } from './helpers.js';

function simulated() {
  const clock = new SimulatedClock();
  const system = testSystem({ clock });
  return { clock, system };
}

describe('sendAfter', () => {
  it('delivers the message after the delay, not before', async () => {
    const { clock, system } = simulated();
    const seen: unknown[] = [];
    const ref = system.spawn<string>((message, ctx) => {
      if (message === 'arm') ctx.sendAfter(100, 'tick');
      else seen.push([message, ctx.now()]);
    });
    system.send(ref, 'arm');
    await system.settle();
    clock.advance(99);
    await system.settle();
    expect(seen).toEqual([]);
    clock.advance(1);
    await system.settle();
    expect(seen).toEqual([['tick', 100]]);
    expect(system.timerCount).toBe(0);
    system.exit(ref, 'kill');
  });

  it('can target another actor', async () => {
    const { clock, system } = simulated();
    const { ref: target, seen } = recorder(system);
    const { ref, ctx } = await withContext(system);
    ctx.sendAfter(10, 'for you', target);
    clock.advance(10);
    await system.settle();
    expect(seen).toEqual(['for you']);
    system.exit(ref, 'kill');
    system.exit(target, 'kill');
  });

  it('timers fire in deadline order', async () => {
    const { clock, system } = simulated();
    const { ref, seen } = recorder(system);
    const { ref: owner, ctx } = await withContext(system);
    ctx.sendAfter(30, 'c', ref);
    ctx.sendAfter(10, 'a', ref);
    ctx.sendAfter(20, 'b', ref);
    ctx.sendAfter(20, 'b2', ref);
    clock.advance(100);
    await system.settle();
    expect(seen).toEqual(['a', 'b', 'b2', 'c']);
    system.exit(ref, 'kill');
    system.exit(owner, 'kill');
  });

  it('timers due at the same instant fire in the order they were set', async () => {
    const { clock, system } = simulated();
    const { ref, seen } = recorder(system);
    const { ref: owner, ctx } = await withContext(system);
    ctx.sendAfter(5, 'keeps the 5 ms list alive', ref);
    ctx.sendAfter(10, 'first, due at 10', ref);
    clock.advance(1);
    ctx.sendAfter(5, 'keeps the 5 ms list alive (2)', ref);
    clock.advance(4);
    ctx.sendAfter(5, 'second, due at 10', ref);
    clock.advance(5);
    await system.settle();
    expect(seen.filter((m) => String(m).includes('due at 10'))).toEqual(['first, due at 10', 'second, due at 10']);
    system.exit(ref, 'kill');
    system.exit(owner, 'kill');
  });

  it('cancelTimer: true for a live timer, false once cancelled or fired; a cancelled timer never fires', async () => {
    const { clock, system } = simulated();
    const { ref, seen } = recorder(system);
    const { ref: owner, ctx } = await withContext(system);
    const cancelled = ctx.sendAfter(10, 'cancelled', ref);
    const fired = ctx.sendAfter(10, 'fired', ref);
    expect(system.info(owner)?.timers).toBe(2);
    expect(ctx.cancelTimer(cancelled)).toBe(true);
    expect(ctx.cancelTimer(cancelled)).toBe(false);
    expect(system.info(owner)?.timers).toBe(1);
    clock.advance(10);
    await system.settle();
    expect(seen).toEqual(['fired']);
    expect(ctx.cancelTimer(fired)).toBe(false);
    expect(system.info(owner)?.timers).toBe(0);
    expect(system.timerCount).toBe(0);
    system.exit(ref, 'kill');
    system.exit(owner, 'kill');
  });

  it('an actor cannot cancel a timer it does not own', async () => {
    const { clock, system } = simulated();
    const { ref, seen } = recorder(system);
    const one = await withContext(system);
    const two = await withContext(system);
    const timer = one.ctx.sendAfter(10, 'kept', ref);
    expect(two.ctx.cancelTimer(timer)).toBe(false);
    clock.advance(10);
    await system.settle();
    expect(seen).toEqual(['kept']);
    for (const r of [ref, one.ref, two.ref]) system.exit(r, 'kill');
  });

  it.each<[string, (ctx: ActorContext, system: ReturnType<typeof testSystem>) => void]>([
    ['stops', (ctx) => ctx.stop()],
    ['crashes', () => {
      throw new Error('crash');
    }],
    ['is killed', (ctx, system) => system.exit(ctx.self, 'kill')],
  ])('every timer is released when the actor %s', async (_label, exit) => {
    const { clock, system } = simulated();
    const { ref: target, seen } = recorder(system);
    const ref = system.spawn<string>((message, ctx) => {
      if (message === 'arm') {
        ctx.sendAfter(10, 'a', target);
        ctx.sendAfter(1_000, 'b', target);
        ctx.sendAfter(60_000, 'c');
      } else exit(ctx, system);
    });
    system.send(ref, 'arm');
    await system.settle();
    expect(system.info(ref)?.timers).toBe(3);
    expect(system.timerCount).toBe(3);
    system.send(ref, 'exit');
    await system.exited(ref);
    expect(system.timerCount).toBe(0);
    clock.advance(100_000);
    await system.settle();
    expect(seen).toEqual([]);
    system.exit(target, 'kill');
  });

  it('are created lazily: an actor starts with no timers', async () => {
    const { system } = simulated();
    const { ref, ctx } = await withContext(system);
    expect(system.info(ref)?.timers).toBe(0);
    expect((ctx as ActorCell).timerSet).toBeNull();
    const timer: TimerEntry = ctx.sendAfter(5, 'x');
    expect(timer.active).toBe(true);
    expect(system.info(ref)?.timers).toBe(1);
    system.exit(ref, 'kill');
    expect(timer.active).toBe(false);
  });

  it('a timer set by a handler still running after its actor was killed is not left armed', async () => {
    const { system } = simulated();
    const gate = deferred();
    let late: TimerEntry | undefined;
    const ref = system.spawn<string>(async (_message, ctx) => {
      await gate.promise;
      late = ctx.sendAfter(60_000, 'too late');
    });
    system.send(ref, 'go');
    await system.settle();
    system.exit(ref, 'kill');
    gate.resolve();
    await gate.promise;
    await system.settle();
    expect(late).toBeDefined();
    expect(late!.active).toBe(false);
    expect(system.timerCount).toBe(0);
  });
});

describe('the actor signal', () => {
  it('is created lazily and aborted at exit with the exit reason', async () => {
    const system = testSystem();
    const reasons: ExitReason[] = ['normal', 'shutdown', new Error('crash')];
    for (const reason of reasons) {
      let signal: AbortSignal | undefined;
      const ref = system.spawn<string>((message, ctx) => {
        if (message === 'get') signal = ctx.signal;
        else if (reason instanceof Error) throw reason;
        else ctx.stop(reason);
      });
      expect((ref._cell as ActorCell).abortController).toBeNull();
      system.send(ref, 'get');
      await system.settle();
      expect(signal!.aborted).toBe(false);
      system.send(ref, 'stop');
      await system.exited(ref);
      expect(signal!.aborted).toBe(true);
      expect(signal!.reason).toBe(reason);
    }
  });

  it('is aborted with killed when the actor is killed, and abort listeners run', async () => {
    const system = testSystem();
    const { ref, ctx } = await withContext(system);
    const heard: unknown[] = [];
    ctx.signal.addEventListener('abort', () => heard.push(ctx.signal.reason));
    system.exit(ref, 'kill');
    expect(heard).toEqual(['killed']);
  });

  it('is the same signal for the whole life of the actor', async () => {
    const system = testSystem();
    const { ref, ctx } = await withContext(system);
    expect(ctx.signal).toBe(ctx.signal);
    system.exit(ref, 'kill');
  });

  it('read for the first time after the actor exited, it is already aborted', async () => {
    const system = testSystem();
    const gate = deferred();
    let signal: AbortSignal | undefined;
    const ref = system.spawn<string>(async (_message, ctx) => {
      await gate.promise;
      signal = ctx.signal;
    });
    system.send(ref, 'go');
    await system.settle();
    system.exit(ref, 'shutdown');
    gate.resolve();
    await gate.promise;
    await system.settle();
    expect(signal!.aborted).toBe(true);
    expect(signal!.reason).toBe('shutdown');
  });
});

describe('the timer service', () => {
  it('fires each entry at its own instant during one advance, and keeps one native timer', () => {
    const { clock, system } = simulated();
    const fired: Array<[string, number]> = [];
    const record = (name: string) => fired.push([name, clock.now()]);
    system.timers.schedule(30, record, 'c');
    system.timers.schedule(10, record, 'a');
    system.timers.schedule(20, record, 'b');
    expect(clock.pendingTimers).toBe(1);
    clock.advance(25);
    expect(fired).toEqual([
      ['a', 10],
      ['b', 20],
    ]);
    expect(system.timerCount).toBe(1);
    clock.advance(5);
    expect(fired.at(-1)).toEqual(['c', 30]);
    expect(system.timerCount).toBe(0);
  });

  it('an entry cancelled before its time never fires', () => {
    const { clock, system } = simulated();
    const fired: string[] = [];
    const entry = system.timers.schedule(10, (name: string) => fired.push(name), 'x');
    system.timers.cancel(entry);
    system.timers.cancel(entry); // twice is harmless
    expect(entry.active).toBe(false);
    expect(system.timerCount).toBe(0);
    clock.advance(100);
    expect(fired).toEqual([]);
  });
});

describe('TimerService and the native timer', () => {
  /** A simulated clock that counts what the service does to its native timers. */
  class CountingClock extends SimulatedClock {
    sets = 0;
    clears = 0;
    refs = 0;
    unrefs = 0;
    referenced = true;
    override setTimer(callback: () => void, delayMs: number) {
      this.sets++;
      this.referenced = true;
      return super.setTimer(callback, delayMs);
    }
    override clearTimer(timer: Parameters<SimulatedClock['clearTimer']>[0]): void {
      this.clears++;
      super.clearTimer(timer);
    }
    refTimer(): void {
      this.refs++;
      this.referenced = true;
    }
    unrefTimer(): void {
      this.unrefs++;
      this.referenced = false;
    }
  }

  it('a burst of schedule/cancel pairs (calls) sets one native timer and never toggles it; idle, it lets the process go', async () => {
    const { TimerService } = await import('../../src/actors/timers.js');
    const clock = new CountingClock();
    const timers = new TimerService(clock);
    for (let i = 0; i < 1_000; i++) timers.cancel(timers.schedule(5_000, () => undefined, i));
    expect({ sets: clock.sets, clears: clock.clears, refs: clock.refs, unrefs: clock.unrefs }).toEqual({ sets: 1, clears: 0, refs: 0, unrefs: 0 });
    expect(clock.referenced).toBe(true);
    // The loop comes round with nothing scheduled: the timer no longer holds the process open.
    await new Promise((resolve) => setImmediate(resolve));
    expect(clock.referenced).toBe(false);
    // The next entry holds it again, and still fires exactly on time.
    const fired: number[] = [];
    clock.advance(10);
    timers.schedule(100, () => fired.push(clock.now()), 0);
    expect(clock.referenced).toBe(true);
    clock.advance(99);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual([110]);
  });
});
