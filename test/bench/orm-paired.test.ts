/**
 * bench/orm/paired.ts, the ORM-over-raw overhead of the orm suite: both sides get the same runs,
 * each reset first, in alternating order, and a wrong checksum fails the measurement.
 */
import { describe, expect, it } from 'vitest';
import { pairedOverhead, pairedText, type PairSide } from '../../bench/orm/paired.js';

function side(name: string, log: string[], checksum = (n: number) => n): PairSide {
  return {
    reset: async () => void log.push(`${name}:reset`),
    run: async (n) => {
      log.push(`${name}:run`);
      return checksum(n);
    },
  };
}

describe('pairedOverhead', () => {
  it('alternates which side runs first, resetting before every run', async () => {
    const log: string[] = [];
    const result = await pairedOverhead(side('orm', log), side('raw', log), { n: 10, pairs: 4, warmupPairs: 0, expected: 10 });
    const order = log.filter((entry) => entry.endsWith(':run')).map((entry) => entry.split(':')[0]);
    expect(order).toEqual(['orm', 'raw', 'raw', 'orm', 'orm', 'raw', 'raw', 'orm']);
    for (let i = 0; i < log.length; i += 2) expect(log[i + 1]).toBe(log[i]!.replace(':reset', ':run'));
    expect(result.pairs).toBe(4);
    expect(result.n).toBe(10);
    expect(Number.isFinite(result.wall)).toBe(true);
    expect(result.wallLow).toBeLessThanOrEqual(result.wallHigh);
    expect(pairedText(result)).toMatch(/^-?\d+\.\d% \(IQR .*, CPU .*, 4 pairs of 10\)$/);
  });

  it('runs the warm-up pairs untimed before the timed ones', async () => {
    const log: string[] = [];
    await pairedOverhead(side('orm', log), side('raw', log), { n: 1, pairs: 2, warmupPairs: 3, expected: 1 });
    expect(log.filter((entry) => entry.endsWith(':run'))).toHaveLength(2 * (3 + 2));
  });

  it('fails on a wrong checksum instead of timing work that was skipped', async () => {
    const log: string[] = [];
    await expect(pairedOverhead(side('orm', log, () => 0), side('raw', log), { n: 5, pairs: 2, warmupPairs: 0, expected: 5 })).rejects.toThrow(/wrong result: checksum 0, expected 5/);
  });
});
