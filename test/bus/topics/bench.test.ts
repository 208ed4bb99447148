import { describe, expect, it } from 'vitest';
import { topicsCases } from '../../../bench/topics.js';

describe('bench/topics.ts (quick)', () => {
  it('measures the fan-out for Molo, EventEmitter and ioredis and returns rows the bench runner can write', { timeout: 60_000 }, async () => {
    const rows = await topicsCases({ quick: true });
    const row = (name: string, impl: string) => rows.find((candidate) => candidate.case === name && candidate.impl === impl);

    for (const [name, impl] of [
      ['topic_fanout', 'molo'],
      ['topic_fanout', 'eventemitter'],
      ['topic_fanout_actors', 'molo'],
    ] as const) {
      expect(row(name, impl), `${name}/${impl}`).toMatchObject({ unit: 'deliveries', n: 100_000, mode: 'quick' });
      expect(row(name, impl)!.ops_per_s).toBeGreaterThan(0);
    }
    // Redis may be absent where this runs: then its row says so rather than failing.
    const redis = row('topic_fanout', 'ioredis')!;
    if (redis.ops_per_s === null) expect(redis.unavailable).toMatch(/redis unavailable|ioredis not installed/);
    else expect(redis.ops_per_s).toBeGreaterThan(0);
    expect(rows.filter((candidate) => 'error' in candidate)).toEqual([]);
    expect(row('topic_fanout', 'ratio')).toMatchObject({ target_vs_eventemitter: '>= 0.5', target_vs_ioredis: '>= 5' });
    expect(typeof row('topic_fanout', 'ratio')!.vs_eventemitter).toBe('number');
  });
});
