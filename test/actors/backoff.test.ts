import { describe, expect, it } from 'vitest';
import { exponentialBackoff } from '../../src/actors/backoff.js';

describe('exponentialBackoff', () => {
  it('doubles from the base up to the cap', () => {
    const delays = [0, 1, 2, 3, 4, 5].map((attempt) => exponentialBackoff({ baseMs: 100, capMs: 1_000 }, attempt));
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('takes another factor and rounds to whole milliseconds', () => {
    expect([0, 1, 2].map((attempt) => exponentialBackoff({ baseMs: 10, capMs: 1_000, factor: 1.5 }, attempt))).toEqual([10, 15, 23]);
  });

  it('yields the cap for attempts past any float, and zero for a zero base', () => {
    expect(exponentialBackoff({ baseMs: 1, capMs: 60_000 }, 5_000)).toBe(60_000);
    expect(exponentialBackoff({ baseMs: 0, capMs: 60_000 }, 5_000)).toBe(0);
  });

  it('spreads the capped delay over the jitter range with the injected random', () => {
    const backoff = { baseMs: 1_000, capMs: 1_000, jitter: [0.75, 1.25] } as const;
    expect(exponentialBackoff(backoff, 3, () => 0)).toBe(750);
    expect(exponentialBackoff(backoff, 3, () => 0.5)).toBe(1_000);
    expect(exponentialBackoff(backoff, 3, () => 0.999_999)).toBe(1_250);
  });

  it('calls random only when there is jitter', () => {
    let calls = 0;
    exponentialBackoff({ baseMs: 1, capMs: 10 }, 2, () => ++calls);
    expect(calls).toBe(0);
  });
});
