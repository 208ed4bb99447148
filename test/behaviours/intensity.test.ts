import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addRestart, RestartLog, restartsInWindow } from '../../src/behaviours/index.js';

/**
 * Brute-force reference of OTP's add_restart/inPeriod: keep every restart ever made; after adding
 * one at `now`, count those with `now - at <= periodMs`; more than `intensity` means give up.
 */
function reference(history: readonly number[], now: number, intensity: number, periodMs: number) {
  const all = [...history, now];
  const inWindow = all.filter((at) => now - at <= periodMs);
  return { inWindow, exceeded: inWindow.length > intensity };
}

describe('addRestart (examples)', () => {
  it('first restart within intensity 1 is allowed; a second one in the period is not', () => {
    const first = addRestart([], 0, 1, 5_000);
    expect(first).toEqual({ restarts: [0], exceeded: false });
    const second = addRestart(first.restarts, 4_999, 1, 5_000);
    expect(second).toEqual({ restarts: [0, 4_999], exceeded: true });
  });

  it('restarts older than the period age out', () => {
    const window = addRestart([0, 100, 200], 5_150, 2, 5_000);
    // 0 and 100 are older than 5,150 - 5,000 = 150; 200 stays.
    expect(window).toEqual({ restarts: [200, 5_150], exceeded: false });
  });

  it('a restart exactly periodMs ago still counts (OTP keeps Now - R =< Period)', () => {
    expect(addRestart([1_000], 6_000, 1, 5_000)).toEqual({ restarts: [1_000, 6_000], exceeded: true });
    // One millisecond later it has aged out.
    expect(addRestart([1_000], 6_001, 1, 5_000)).toEqual({ restarts: [6_001], exceeded: false });
  });

  it('intensity 0: any restart exceeds', () => {
    expect(addRestart([], 0, 0, 5_000)).toEqual({ restarts: [0], exceeded: true });
    expect(addRestart([], 1e9, 0, 1)).toEqual({ restarts: [1e9], exceeded: true });
  });

  it('restarts at the same instant all count', () => {
    let restarts: readonly number[] = [];
    const exceeded: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      const window = addRestart(restarts, 42, 3, 10);
      restarts = window.restarts;
      exceeded.push(window.exceeded);
    }
    expect(exceeded).toEqual([false, false, false, true]);
  });

  it('does not mutate its input', () => {
    const restarts = Object.freeze([1, 2, 3]);
    expect(addRestart(restarts, 10, 5, 100).restarts).toEqual([1, 2, 3, 10]);
    expect(restarts).toEqual([1, 2, 3]);
  });

  it('restartsInWindow counts without adding, with the same inclusive boundary', () => {
    expect(restartsInWindow([], 100, 10)).toBe(0);
    expect(restartsInWindow([0, 90, 100], 100, 10)).toBe(2);
    expect(restartsInWindow([0, 90, 100], 101, 10)).toBe(1);
    expect(restartsInWindow([0, 90, 100], 111, 10)).toBe(0);
  });
});

describe('addRestart (properties against a brute-force reference)', () => {
  /** Non-decreasing restart times, as a monotonic clock produces them. */
  const times = fc
    .array(fc.integer({ min: 0, max: 3_000 }), { maxLength: 40 })
    .map((gaps) => gaps.reduce<number[]>((acc, gap) => [...acc, (acc.at(-1) ?? 0) + gap], []));
  const params = fc.record({ intensity: fc.integer({ min: 0, max: 8 }), periodMs: fc.integer({ min: 1, max: 10_000 }) });

  it('folding addRestart over a run of restarts agrees with the reference at every step', () => {
    fc.assert(
      fc.property(times, params, (instants, { intensity, periodMs }) => {
        let window: readonly number[] = [];
        const history: number[] = [];
        for (const now of instants) {
          const result = addRestart(window, now, intensity, periodMs);
          const expected = reference(history, now, intensity, periodMs);
          expect(result.exceeded).toBe(expected.exceeded);
          expect(result.restarts).toEqual(expected.inWindow);
          // The kept window is exactly what restartsInWindow sees.
          expect(restartsInWindow(result.restarts, now, periodMs)).toBe(result.restarts.length);
          expect(restartsInWindow(history.concat(now), now, periodMs)).toBe(expected.inWindow.length);
          window = result.restarts;
          history.push(now);
        }
      }),
      { seed: 42, numRuns: 1_000 },
    );
  });

  it('the window never holds more than needed: every kept restart is within the period and the newest is now', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20_000 })), fc.integer({ min: 20_000, max: 40_000 }), params, (history, now, p) => {
        const { restarts } = addRestart(history, now, p.intensity, p.periodMs);
        expect(restarts.at(-1)).toBe(now);
        for (const at of restarts) expect(now - at).toBeLessThanOrEqual(p.periodMs);
        expect(restarts.length).toBe(history.filter((at) => now - at <= p.periodMs).length + 1);
      }),
      { seed: 42, numRuns: 1_000 },
    );
  });

  it('exceeded is monotone in intensity: allowed at intensity i implies allowed at every i′ ≥ i', () => {
    fc.assert(
      fc.property(times, fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 0, max: 8 }), (instants, periodMs, intensity) => {
        const now = (instants.at(-1) ?? 0) + 1;
        const lower = addRestart(instants, now, intensity, periodMs).exceeded;
        const higher = addRestart(instants, now, intensity + 1, periodMs).exceeded;
        if (!lower) expect(higher).toBe(false);
      }),
      { seed: 42, numRuns: 500 },
    );
  });
});

describe('RestartLog (the incremental window the supervisor uses) against the same reference', () => {
  it('examples: boundary inclusive, ageing out, intensity 0', () => {
    const log = new RestartLog(1, 5_000);
    expect(log.add(1_000)).toBe(false);
    expect(log.add(6_000)).toBe(true);
    const fresh = new RestartLog(1, 5_000);
    fresh.add(1_000);
    expect(fresh.add(6_001)).toBe(false);
    expect(fresh.count(6_001)).toBe(1);
    expect(fresh.count(11_001)).toBe(1);
    expect(fresh.count(11_002)).toBe(0);
    expect(new RestartLog(0, 10).add(0)).toBe(true);
  });

  /** Steps: a restart, or only a look at the count, each some time after the previous one. */
  const steps = fc.array(fc.record({ gap: fc.integer({ min: 0, max: 3_000 }), restart: fc.boolean() }), { maxLength: 200 });
  const params = fc.record({ intensity: fc.integer({ min: 0, max: 8 }), periodMs: fc.integer({ min: 1, max: 10_000 }) });

  it('add agrees with addRestart; count and timestamps agree with the brute-force window', () => {
    fc.assert(
      fc.property(steps, params, (run, { intensity, periodMs }) => {
        const log = new RestartLog(intensity, periodMs);
        const history: number[] = [];
        let now = 0;
        for (const { gap, restart } of run) {
          now += gap;
          if (restart) {
            const expected = reference(history, now, intensity, periodMs);
            expect(log.add(now)).toBe(expected.exceeded);
            history.push(now);
            // Only the newest intensity + 1 can decide an answer, so no more are kept.
            expect(log.timestamps()).toEqual(expected.inWindow.slice(-(intensity + 1)));
          }
          const inWindow = history.filter((at) => now - at <= periodMs).length;
          expect(log.count(now)).toBe(Math.min(inWindow, intensity + 1));
        }
      }),
      { seed: 42, numRuns: 1_000 },
    );
  });

  it('stays correct across compaction (long runs of restarts)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 100, maxLength: 600 }), params, (gaps, { intensity, periodMs }) => {
        const log = new RestartLog(intensity, periodMs);
        let window: readonly number[] = [];
        let now = 0;
        for (const gap of gaps) {
          now += gap;
          const result = addRestart(window, now, intensity, periodMs);
          expect(log.add(now)).toBe(result.exceeded);
          window = result.restarts;
        }
      }),
      { seed: 42, numRuns: 200 },
    );
  });
});

