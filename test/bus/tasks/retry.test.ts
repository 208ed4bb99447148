import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidBusOption, RETRY_DEFAULTS, resolveRetryPolicy, retryDelay } from '../../../src/bus/index.js';

describe('retry delay (S7-2)', () => {
  it('defaults: base 1 s, cap 300 s, jitter 0..1000 ms', () => {
    expect(RETRY_DEFAULTS).toEqual({ baseMs: 1_000, capMs: 300_000, jitterMs: 1_000 });
    expect(resolveRetryPolicy()).toEqual(RETRY_DEFAULTS);
  });

  it('doubles from the base without jitter and stops at the cap', () => {
    const none = (): number => 0;
    expect([0, 1, 2, 3, 8, 9, 10, 100, 2_000].map((n) => retryDelay(n, RETRY_DEFAULTS, none))).toEqual([
      1_000, 2_000, 4_000, 8_000, 256_000, 300_000, 300_000, 300_000, 300_000,
    ]);
    // The largest jitter is the whole 1,000 ms.
    expect(retryDelay(0, RETRY_DEFAULTS, () => 0.999_999_9)).toBe(2_000);
    expect(retryDelay(8, RETRY_DEFAULTS, () => 0.999_999_9)).toBe(257_000);
  });

  it('refuses a policy or attempt out of range, naming the setting', () => {
    expect(() => resolveRetryPolicy({ baseMs: 0 })).toThrow(InvalidBusOption);
    expect(() => resolveRetryPolicy({ baseMs: 10, capMs: 5 })).toThrow(/retry.baseMs/);
    expect(() => resolveRetryPolicy({ capMs: 24 * 3_600_000 + 1 })).toThrow(/retry.capMs/);
    expect(() => resolveRetryPolicy({ jitterMs: -1 })).toThrow(/retry.jitterMs/);
    expect(() => retryDelay(-1)).toThrow(/retry.attempt/);
    expect(() => retryDelay(1.5)).toThrow(InvalidBusOption);
  });

  const policy = fc.record({
    baseMs: fc.integer({ min: 1, max: 10_000 }),
    capMs: fc.integer({ min: 10_000, max: 600_000 }),
    jitterMs: fc.integer({ min: 0, max: 5_000 }),
  });

  it('property: min(base·2^n, cap) ≤ delay ≤ min(base·2^n + jitterMs, cap), a whole number of ms', () => {
    fc.assert(
      fc.property(policy, fc.integer({ min: 0, max: 200 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (raw, n, r) => {
        const resolved = resolveRetryPolicy(raw);
        const delay = retryDelay(n, resolved, () => r);
        const exponential = resolved.baseMs * 2 ** n;
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(Math.min(exponential, resolved.capMs));
        expect(delay).toBeLessThanOrEqual(Math.min(exponential + resolved.jitterMs, resolved.capMs));
        expect(delay).toBeLessThanOrEqual(resolved.capMs);
      }),
      { seed: 2, numRuns: 1_000 },
    );
  });

  it('property: for one jitter draw the delay never shrinks as attempts grow', () => {
    fc.assert(
      fc.property(policy, fc.integer({ min: 0, max: 60 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (raw, n, r) => {
        const resolved = resolveRetryPolicy(raw);
        expect(retryDelay(n + 1, resolved, () => r)).toBeGreaterThanOrEqual(retryDelay(n, resolved, () => r));
      }),
      { seed: 3, numRuns: 1_000 },
    );
  });

  it('property: the jitter is spread over 0..jitterMs (each tenth of the range drawn)', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 50 }), (draws) => {
        for (const r of draws) {
          const jitter = retryDelay(0, RETRY_DEFAULTS, () => r) - RETRY_DEFAULTS.baseMs;
          expect(jitter).toBe(Math.floor(r * 1_001));
        }
      }),
      { seed: 4, numRuns: 200 },
    );
    // With Math.random, 2,000 draws land in every tenth of 0..1000.
    const buckets = new Set<number>();
    for (let i = 0; i < 2_000; i++) buckets.add(Math.min(9, Math.floor((retryDelay(0) - 1_000) / 100)));
    expect(buckets.size).toBe(10);
  });
});
