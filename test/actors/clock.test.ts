import { describe, expect, it } from 'vitest';
import { testSystem } from '../support/systems.js';
import { SimulatedClock, systemClock } from '../../src/actors/index.js';

describe('SimulatedClock', () => {
  it('moves only when advanced', () => {
    const clock = new SimulatedClock(1_000);
    expect(clock.now()).toBe(1_000);
    expect(clock.now()).toBe(1_000);
    clock.advance(250);
    expect(clock.now()).toBe(1_250);
  });

  it('wallNow is the epoch plus the simulated time', () => {
    const clock = new SimulatedClock(0, Date.UTC(2030, 0, 1));
    clock.advance(60_000);
    expect(clock.wallNow()).toBe(Date.UTC(2030, 0, 1, 0, 1));
    expect(new SimulatedClock().wallNow()).toBe(Date.UTC(2026, 0, 1));
  });

  it('fires timers in due order, each at its own instant', () => {
    const clock = new SimulatedClock();
    const fired: Array<[string, number]> = [];
    clock.setTimer(() => fired.push(['c', clock.now()]), 30);
    clock.setTimer(() => fired.push(['a', clock.now()]), 10);
    clock.setTimer(() => fired.push(['b', clock.now()]), 20);
    clock.advance(100);
    expect(fired).toEqual([
      ['a', 10],
      ['b', 20],
      ['c', 30],
    ]);
    expect(clock.now()).toBe(100);
  });

  it('timers due at the same instant fire in the order they were set', () => {
    const clock = new SimulatedClock();
    const fired: string[] = [];
    for (const name of ['first', 'second', 'third']) clock.setTimer(() => fired.push(name), 5);
    clock.advance(5);
    expect(fired).toEqual(['first', 'second', 'third']);
  });

  it('fires nothing before its time and keeps later timers pending', () => {
    const clock = new SimulatedClock();
    const fired: number[] = [];
    clock.setTimer(() => fired.push(10), 10);
    clock.setTimer(() => fired.push(20), 20);
    clock.advance(9);
    expect(fired).toEqual([]);
    expect(clock.pendingTimers).toBe(2);
    clock.advance(1);
    expect(fired).toEqual([10]);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(10);
    expect(fired).toEqual([10, 20]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a timer set by a callback fires within the same advance if due', () => {
    const clock = new SimulatedClock();
    const fired: Array<[string, number]> = [];
    clock.setTimer(() => {
      fired.push(['outer', clock.now()]);
      clock.setTimer(() => fired.push(['inner', clock.now()]), 5);
      clock.setTimer(() => fired.push(['beyond', clock.now()]), 500);
    }, 10);
    clock.setTimer(() => fired.push(['between', clock.now()]), 12);
    clock.advance(20);
    expect(fired).toEqual([
      ['outer', 10],
      ['between', 12],
      ['inner', 15],
    ]);
    expect(clock.pendingTimers).toBe(1);
  });

  it('a zero or negative delay fires on the next advance, even advance(0)', () => {
    const clock = new SimulatedClock();
    const fired: string[] = [];
    clock.setTimer(() => fired.push('zero'), 0);
    clock.setTimer(() => fired.push('negative'), -5);
    expect(fired).toEqual([]);
    clock.advance(0);
    expect(fired).toEqual(['zero', 'negative']);
  });

  it('a cleared timer never fires, also when cleared by an earlier callback', () => {
    const clock = new SimulatedClock();
    const fired: string[] = [];
    const later = clock.setTimer(() => fired.push('later'), 20);
    const cleared = clock.setTimer(() => fired.push('cleared'), 5);
    clock.clearTimer(cleared);
    clock.setTimer(() => clock.clearTimer(later), 10);
    clock.advance(50);
    expect(fired).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('systemClock', () => {
  it('is monotonic and has a real timer', async () => {
    const a = systemClock.now();
    const b = systemClock.now();
    expect(b).toBeGreaterThanOrEqual(a);
    expect(Math.abs(systemClock.wallNow() - Date.now())).toBeLessThan(1_000);
    await new Promise<void>((resolve) => {
      const timer = systemClock.setTimer(resolve, 1);
      systemClock.refTimer?.(timer);
    });
    let fired = false;
    const cancelled = systemClock.setTimer(() => (fired = true), 1);
    systemClock.clearTimer(cancelled);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(fired).toBe(false);
  });
});

describe('SimulatedClock: stepping, with actors running between timers', () => {
  it('nextDue names the next timer; step moves to it and fires everything due then', () => {
    const clock = new SimulatedClock();
    const fired: string[] = [];
    expect(clock.nextDue()).toBeUndefined();
    expect(clock.step()).toBe(false);
    clock.setTimer(() => fired.push('b'), 20);
    clock.setTimer(() => fired.push('a1'), 10);
    clock.setTimer(() => fired.push('a2'), 10);
    expect(clock.nextDue()).toBe(10);
    expect(clock.step()).toBe(true);
    expect([clock.now(), fired]).toEqual([10, ['a1', 'a2']]);
    expect(clock.nextDue()).toBe(20);
    clock.step();
    expect([clock.now(), fired]).toEqual([20, ['a1', 'a2', 'b']]);
  });

  it('advanceAsync lets an actor run between timers: a self-rearming tick fires each period, advance does not', async () => {
    const run = async (stepwise: boolean): Promise<number> => {
      const clock = new SimulatedClock();
      const system = testSystem({ clock });
      let ticks = 0;
      const ref = system.spawn<'tick'>({
        init: (ctx) => void ctx.sendAfter(10, 'tick'),
        handle: (ctx) => {
          ticks++;
          ctx.sendAfter(10, 'tick');
        },
      });
      await system.settle();
      if (stepwise) await clock.advanceAsync(100, () => system.settle());
      else {
        clock.advance(100);
        await system.settle();
      }
      expect(clock.now()).toBe(100);
      system.exit(ref, 'kill');
      return ticks;
    };
    expect(await run(true)).toBe(10);
    expect(await run(false)).toBe(1);
  });
});
