/**
 * The cache: synchronous hits, TTL on the injected clock, tags, LRU caps, singleflight, negative
 * caching, compute timeouts, invalidation (by key, tag and write events) and its metrics.
 */
import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import {
  Cache,
  CACHE_LIMITS,
  ENTRY_OVERHEAD_BYTES,
  estimateSize,
  rowTag,
  tableTag,
  type WriteEvent,
  type WriteEventSource,
} from '../../../src/data/cache/index.js';
import { CacheCapExceeded, CacheComputeTimeout, CacheInvalidArgument, InvalidDataConfig } from '../../../src/data/index.js';

/** A plain in-process emitter, as the ORM's write channel will be. */
function emitter<E = WriteEvent>(): WriteEventSource<E> & { emit(event: E): void; readonly listeners: number } {
  const events = new EventEmitter();
  return {
    subscribe(listener) {
      events.on('write', listener);
      return () => void events.off('write', listener);
    },
    emit: (event) => void events.emit('write', event),
    get listeners() {
      return events.listenerCount('write');
    },
  };
}

const capOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CacheCapExceeded);
    return (error as CacheCapExceeded).cap;
  }
  throw new Error('did not throw');
};

/** A promise and its resolver, to hold a compute open. */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(error: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('Cache', () => {
  it('answers a hit synchronously, and a miss with undefined', async () => {
    const cache = new Cache<{ n: number }>();
    expect(cache.get('k')).toBeUndefined();
    cache.set('k', { n: 1 });
    const hit = cache.get('k');
    expect(hit).toEqual({ n: 1 });
    expect(hit).not.toBeInstanceOf(Promise);
    expect(await cache.getOrCompute('c', () => ({ n: 2 }))).toEqual({ n: 2 });
    expect(cache.get('c')).toEqual({ n: 2 });
    expect(cache.stats()).toMatchObject({ hits: 2, misses: 2, entries: 2, computes: 1 });
  });

  it('expires entries by the injected clock: 60 s by default, or the TTL given', () => {
    const clock = new SimulatedClock();
    const cache = new Cache<string>({ clock });
    cache.set('default', 'd');
    cache.set('short', 's', { ttlMs: 1_000 });
    clock.advance(999);
    expect(cache.get('short')).toBe('s');
    clock.advance(1);
    expect(cache.get('short')).toBeUndefined();
    clock.advance(58_999);
    expect(cache.get('default')).toBe('d');
    clock.advance(1);
    expect(cache.get('default')).toBeUndefined();
    expect(cache.stats()).toMatchObject({ entries: 0, expirations: 2 });
  });

  it('has no infinite TTL: TTLs are capped, and bad ones refused', () => {
    const cache = new Cache<string>();
    expect(capOf(() => cache.set('k', 'v', { ttlMs: CACHE_LIMITS.maxTtlMs + 1 }))).toBe('cache.maxTtlMs');
    expect(() => cache.set('k', 'v', { ttlMs: 0 })).toThrow(CacheInvalidArgument);
    expect(() => cache.set('k', 'v', { ttlMs: Number.POSITIVE_INFINITY })).toThrow(CacheInvalidArgument);
    expect(() => cache.set('k', undefined as unknown as string)).toThrow(CacheInvalidArgument);
    expect(() => new Cache({ defaultTtlMs: CACHE_LIMITS.maxTtlMs + 1 })).toThrow(InvalidDataConfig);
    expect(() => new Cache({ maxEntries: CACHE_LIMITS.maxEntries + 1 })).toThrow(InvalidDataConfig);
    expect(() => new Cache({ maxBytes: CACHE_LIMITS.maxBytes + 1 })).toThrow(InvalidDataConfig);
  });

  it('purges every entry carrying a tag, and caps tags at 16 per entry', () => {
    const cache = new Cache<number>();
    cache.set('u1', 1, { tags: ['users', 'user:1'] });
    cache.set('u2', 2, { tags: ['users', 'user:2'] });
    cache.set('o1', 3, { tags: ['orders', 'user:1'] });
    expect(cache.purgeTag('users')).toBe(2);
    expect(cache.get('u1')).toBeUndefined();
    expect(cache.get('u2')).toBeUndefined();
    expect(cache.get('o1')).toBe(3);
    expect(cache.purgeTag('users')).toBe(0);
    expect(cache.purgeTag('user:1')).toBe(1);
    expect(cache.size).toBe(0);
    const tags = Array.from({ length: 16 }, (_, i) => `t${i}`);
    cache.set('many', 1, { tags });
    expect(capOf(() => cache.set('too-many', 1, { tags: [...tags, 't16'] }))).toBe('cache.maxTags');
    expect(() => cache.set('bad', 1, { tags: [1 as unknown as string] })).toThrow(CacheInvalidArgument);
    cache.set('many', 2); // re-set without tags: the old tags no longer reach it
    expect(cache.purgeTag('t0')).toBe(0);
    expect(cache.get('many')).toBe(2);
  });

  it('evicts the least recently used entry at maxEntries', () => {
    const cache = new Cache<number>({ maxEntries: 3 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    cache.get('a');
    cache.set('d', 4);
    expect(['a', 'b', 'c', 'd'].map((key) => cache.get(key))).toEqual([1, undefined, 3, 4]);
    expect(cache.stats().evictions).toBe(1);
  });

  it('evicts by size at maxBytes (sizes from sizeOf, plus key and overhead), and refuses an entry larger than that', async () => {
    const entry = (size: number, key: string) => size + ENTRY_OVERHEAD_BYTES + 2 * key.length;
    const cache = new Cache<{ size: number }>({ maxBytes: entry(100, 'a') * 3, sizeOf: (value) => value.size });
    cache.set('a', { size: 100 });
    cache.set('b', { size: 100 });
    cache.set('c', { size: 100 });
    expect(cache.stats().bytes).toBe(entry(100, 'a') * 3);
    cache.set('d', { size: 150 });
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('c')).toEqual({ size: 100 });
    cache.set('c', { size: 1 });
    expect(capOf(() => cache.set('c', { size: entry(100, 'a') * 3 }))).toBe('cache.maxBytes');
    // The value the caller tried to replace is gone too: it is older than what they meant to store.
    expect(cache.get('c')).toBeUndefined();
    // A computed value too large to keep is still returned, just not stored.
    expect(await cache.getOrCompute('huge', () => ({ size: 10_000_000 }))).toEqual({ size: 10_000_000 });
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.stats().oversize).toBe(1);
  });

  it('estimates sizes by walking values, counting shared objects once and bounding the walk', () => {
    const shared = { name: 'x'.repeat(100) };
    expect(estimateSize('abc')).toBe(22);
    expect(estimateSize(Buffer.alloc(1_000))).toBe(1_064);
    expect(estimateSize([shared, shared])).toBeLessThan(2 * estimateSize(shared));
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(Number.isFinite(estimateSize(cyclic))).toBe(true);
    expect(estimateSize(new Array(2_000_000).fill(0))).toBe(Number.POSITIVE_INFINITY);
    const cache = new Cache<number[]>();
    expect(capOf(() => cache.set('huge', new Array(2_000_000).fill(0)))).toBe('cache.maxBytes');
  });

  it('runs 100 concurrent computes of one key once, and every caller gets its value', async () => {
    const cache = new Cache<string>();
    let computes = 0;
    const gate = deferred<void>();
    const compute = async () => {
      computes++;
      await gate.promise;
      return 'value';
    };
    const calls = Array.from({ length: 100 }, () => cache.getOrCompute('k', compute));
    gate.resolve();
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 100 }, () => 'value'));
    expect(computes).toBe(1);
    expect(cache.stats()).toMatchObject({ computes: 1, coalesced: 99, inflight: 0 });
    expect(cache.get('k')).toBe('value');
  });

  it('a failing compute rejects every caller, stores nothing, and the next call computes again', async () => {
    const cache = new Cache<string>();
    const failure = new Error('backend down');
    let computes = 0;
    const calls = Array.from({ length: 10 }, () =>
      cache.getOrCompute('k', async () => {
        computes++;
        throw failure;
      }),
    );
    for (const call of calls) await expect(call).rejects.toBe(failure);
    expect(computes).toBe(1);
    expect(cache.has('k')).toBe(false);
    await expect(cache.getOrCompute('sync', () => { throw failure; })).rejects.toBe(failure);
    expect(await cache.getOrCompute('k', () => 'recovered')).toBe('recovered');
  });

  it('caches a miss only when asked, for at most 10 s', async () => {
    const clock = new SimulatedClock();
    const cache = new Cache<string>({ clock });
    let computes = 0;
    const missing = () => {
      computes++;
      return undefined;
    };
    expect(await cache.getOrCompute('nobody', missing, {})).toBeUndefined();
    expect(await cache.getOrCompute('nobody', missing, {})).toBeUndefined();
    expect(computes).toBe(2);
    expect(await cache.getOrCompute('nobody', missing, { negativeTtlMs: 5_000 })).toBeUndefined();
    expect(await cache.getOrCompute('nobody', missing, { negativeTtlMs: 5_000 })).toBeUndefined();
    expect(cache.get('nobody')).toBeUndefined();
    expect(cache.has('nobody')).toBe(true);
    expect(computes).toBe(3);
    clock.advance(5_000);
    expect(await cache.getOrCompute('nobody', () => 'arrived', { negativeTtlMs: 5_000 })).toBe('arrived');
    await expect(cache.getOrCompute('x', missing, { negativeTtlMs: 10_001 })).rejects.toSatisfy(
      (error: unknown) => error instanceof CacheCapExceeded && error.cap === 'cache.maxNegativeTtlMs',
    );
  });

  it('a compute overtaken by an invalidation answers its callers but stores nothing', async () => {
    const cache = new Cache<string>();
    const overtaken = async (invalidate: () => void) => {
      const gate = deferred<string>();
      const call = cache.getOrCompute('k', () => gate.promise, { tags: ['t'] });
      invalidate();
      gate.resolve('read before the write');
      expect(await call).toBe('read before the write');
      return cache.get('k');
    };
    expect(await overtaken(() => cache.delete('k'))).toBeUndefined();
    expect(await overtaken(() => cache.purgeTag('t'))).toBeUndefined();
    expect(await overtaken(() => cache.clear())).toBeUndefined();
    expect(await overtaken(() => cache.set('k', 'newer'))).toBe('newer');
    cache.delete('k');
    expect(await overtaken(() => cache.purgeTag('other'))).toBe('read before the write');
  });

  it('fails a compute that outlives computeTimeoutMs and frees its key', async () => {
    const clock = new SimulatedClock();
    const cache = new Cache<string>({ clock, computeTimeoutMs: 1_000 });
    const never = () => new Promise<string>(() => undefined);
    const hung = cache.getOrCompute('k', never);
    const joined = cache.getOrCompute('k', () => 'never called');
    clock.advance(500);
    const later = cache.getOrCompute('later', never);
    clock.advance(500);
    await expect(hung).rejects.toBeInstanceOf(CacheComputeTimeout);
    await expect(joined).rejects.toBeInstanceOf(CacheComputeTimeout);
    expect(cache.stats().inflight).toBe(1);
    expect(await cache.getOrCompute('k', () => 'fresh')).toBe('fresh');
    clock.advance(499);
    expect(cache.stats().inflight).toBe(1);
    clock.advance(1);
    await expect(later).rejects.toBeInstanceOf(CacheComputeTimeout);
    // With nothing in flight the shared timer does not arm again.
    expect(cache.stats().inflight).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('caps computes in flight at maxInflight', async () => {
    const cache = new Cache<string>({ maxInflight: 2 });
    const gate = deferred<string>();
    const first = cache.getOrCompute('a', () => gate.promise);
    const second = cache.getOrCompute('b', () => gate.promise);
    await expect(cache.getOrCompute('c', () => 'c')).rejects.toSatisfy((error: unknown) => error instanceof CacheCapExceeded && error.cap === 'cache.maxInflight');
    // Joining a flight is not a new one.
    const joined = cache.getOrCompute('a', () => 'x');
    gate.resolve('done');
    expect(await Promise.all([first, second, joined])).toEqual(['done', 'done', 'done']);
    expect(await cache.getOrCompute('c', () => 'c')).toBe('c');
  });

  it('invalidates from write events: default row and table tags, custom keys, unsubscribe', () => {
    const cache = new Cache<string>();
    const writes = emitter();
    const stop = cache.invalidateOn(writes);
    cache.set('user:1', 'alice', { tags: [rowTag('users', 1)] });
    cache.set('user:2', 'bob', { tags: [rowTag('users', 2)] });
    cache.set('users:list', 'alice,bob', { tags: [tableTag('users')] });
    cache.set('order:1', 'o', { tags: [rowTag('orders', 1)] });
    writes.emit({ table: 'users', primaryKey: 1, op: 'update', version: 2, txId: 10n });
    expect(cache.get('user:1')).toBeUndefined();
    expect(cache.get('users:list')).toBeUndefined();
    expect(cache.get('user:2')).toBe('bob');
    expect(cache.get('order:1')).toBe('o');
    stop();
    expect(writes.listeners).toBe(0);
    writes.emit({ table: 'users', primaryKey: 2, op: 'delete' });
    expect(cache.get('user:2')).toBe('bob');

    // A composite key, mapped to cache keys by the application.
    const custom = emitter();
    cache.invalidateOn(custom, (event) => (event.table === 'orders' ? { keys: [`order:${String((event.primaryKey as unknown[])[0])}`] } : undefined));
    custom.emit({ table: 'orders', primaryKey: [1, 'eu'], op: 'delete' });
    expect(cache.get('order:1')).toBeUndefined();
    expect(cache.get('user:2')).toBe('bob');
    expect(rowTag('orders', [1, 'eu'])).toBe('row:orders:(1,eu)');
    expect(rowTag('files', Buffer.from([1, 255]))).toBe('row:files:\\x01ff');
  });

  it('clears everything when a keyFor throws: stale data is worse than a recompute', () => {
    const cache = new Cache<string>();
    const writes = emitter();
    cache.invalidateOn(writes, () => {
      throw new Error('bad mapping');
    });
    cache.set('a', '1');
    cache.set('b', '2');
    expect(() => writes.emit({ table: 't', primaryKey: 1, op: 'insert' })).not.toThrow();
    expect(cache.size).toBe(0);
    expect(cache.stats().invalidationErrors).toBe(1);
  });

  it('counts hits, misses and evictions in prom-client when given a registry', async () => {
    const registry = new Registry();
    const clock = new SimulatedClock();
    const cache = new Cache<number>({ name: 'users', metrics: registry, maxEntries: 1, clock });
    const other = new Cache<number>({ name: 'orders', metrics: registry });
    cache.set('a', 1);
    cache.get('a');
    cache.get('a');
    cache.get('missing');
    cache.set('b', 2); // evicts a
    cache.set('c', 3, { ttlMs: 1 });
    clock.advance(1);
    cache.get('c');
    other.get('x');
    const text = await registry.metrics();
    expect(text).toContain('molo_cache_hits_total{cache="users"} 2');
    expect(text).toContain('molo_cache_misses_total{cache="users"} 2');
    expect(text).toContain('molo_cache_misses_total{cache="orders"} 1');
    expect(text).toContain('molo_cache_evictions_total{cache="users",reason="lru"} 2');
    expect(text).toContain('molo_cache_evictions_total{cache="users",reason="expired"} 1');
    expect(text).toContain('molo_cache_entries{cache="users"} 0');
  });
});
