/**
 * The cache cases:
 * - cache_hit: synchronous hits over 16,384 cached keys, Molo's `Cache.get` against lru-cache's
 *   `get`, both holding entries with a 60 s TTL (Molo's entries always have one) and room for all.
 * - cache_compute_100: `getOrCompute` under 100-way contention against async-cache-dedupe: groups
 *   of 100 concurrent calls for a fresh key, each group running one compute (an async function
 *   returning at once), so the cost measured is the miss, the singleflight and the 99 joins.
 */
import { createCache } from 'async-cache-dedupe';
import { LRUCache } from 'lru-cache';
import { Cache } from '../../src/data/cache/index.js';
import type { CaseSpec, Contender } from '../data/rounds.js';

export const CACHE_CASES = ['cache_hit', 'cache_compute_100'] as const;

export interface CacheSizes {
  readonly hits: number;
  readonly computes: number;
  readonly rounds: number;
}

const KEYS = 16_384;
const MASK = KEYS - 1;
const TTL_MS = 60_000;
const CONTENTION = 100;
const keys = Array.from({ length: KEYS }, (_, i) => `user:${i}`);

function moloHits(): Contender {
  let cache: Cache<number> | undefined;
  return {
    impl: 'molo',
    open: async () => {
      cache = new Cache<number>({ maxEntries: 131_072, defaultTtlMs: TTL_MS });
      for (const key of keys) cache.set(key, 1);
    },
    run: async (n) => {
      const c = cache!;
      let sum = 0;
      for (let i = 0; i < n; i++) sum += c.get(keys[i & MASK]!)!;
      return sum;
    },
    close: async () => void cache?.clear(),
  };
}

function lruCacheHits(): Contender {
  let cache: LRUCache<string, number> | undefined;
  return {
    impl: 'lru-cache',
    open: async () => {
      cache = new LRUCache<string, number>({ max: 131_072, ttl: TTL_MS });
      for (const key of keys) cache.set(key, 1);
    },
    run: async (n) => {
      const c = cache!;
      let sum = 0;
      for (let i = 0; i < n; i++) sum += c.get(keys[i & MASK]!)!;
      return sum;
    },
    close: async () => void cache?.clear(),
  };
}

/** Fresh keys across runs and rounds, so every group misses and computes once. */
let nextGroup = 0;

async function contended(n: number, call: (key: string) => Promise<number>): Promise<number> {
  let sum = 0;
  const calls = new Array<Promise<number>>(CONTENTION);
  for (let group = 0; group < n / CONTENTION; group++) {
    const key = `group:${nextGroup++}`;
    for (let i = 0; i < CONTENTION; i++) calls[i] = call(key);
    for (const value of await Promise.all(calls)) sum += value;
  }
  return sum;
}

function moloCompute(): Contender {
  let cache: Cache<number> | undefined;
  let computes = 0;
  const compute = async (): Promise<number> => {
    computes++;
    return 1;
  };
  return {
    impl: 'molo',
    open: async () => void (cache = new Cache<number>({ defaultTtlMs: TTL_MS })),
    run: async (n) => {
      computes = 0;
      const c = cache!;
      const sum = await contended(n, (key) => c.getOrCompute(key, compute));
      if (computes !== n / CONTENTION) throw new Error(`${computes} computes for ${n / CONTENTION} groups`);
      return sum;
    },
    close: async () => void cache?.clear(),
  };
}

interface DedupeCache {
  compute(key: string): Promise<number>;
}

function dedupeCompute(): Contender {
  let cache: DedupeCache | undefined;
  let computes = 0;
  return {
    impl: 'async-cache-dedupe',
    open: async () => {
      const created = createCache({ ttl: TTL_MS / 1_000, storage: { type: 'memory', options: { size: 131_072 } } });
      cache = created.define('compute', async () => {
        computes++;
        return 1;
      }) as unknown as DedupeCache;
    },
    run: async (n) => {
      computes = 0;
      const c = cache!;
      const sum = await contended(n, (key) => c.compute(key));
      if (computes !== n / CONTENTION) throw new Error(`${computes} computes for ${n / CONTENTION} groups`);
      return sum;
    },
    close: async () => undefined,
  };
}

export function cacheCases(sizes: CacheSizes): CaseSpec[] {
  return [
    { name: 'cache_hit', unit: 'gets', n: sizes.hits, warmupN: Math.max(KEYS, sizes.hits / 5), rounds: sizes.rounds, expected: (n) => n, contenders: [moloHits(), lruCacheHits()] },
    {
      name: 'cache_compute_100',
      unit: 'calls',
      n: sizes.computes,
      warmupN: Math.max(CONTENTION, Math.round(sizes.computes / 5 / CONTENTION) * CONTENTION),
      rounds: sizes.rounds,
      expected: (n) => n,
      contenders: [moloCompute(), dedupeCompute()],
    },
  ];
}
