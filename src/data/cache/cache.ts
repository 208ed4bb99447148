/**
 * An in-process cache: synchronous `get` on a hit, `getOrCompute` with singleflight, TTLs on the
 * injected clock (default 60 s, at most 24 h: nothing lives forever), tags (at most 16 an entry) for
 * group invalidation, negative caching on request (at most 10 s), and LRU eviction at 131,072 entries
 * or 512 MiB (estimated), whichever comes first. Invalidation is explicit: by key, by tag, or by the
 * write events a source (the ORM) emits.
 *
 * Entries sit in a Map for lookup and an intrusive doubly linked list for recency, so a hit is one
 * Map lookup, one clock read and a few pointer writes. Expired entries go when read, or when they
 * reach the least recently used end.
 */
import { systemClock } from '../../actors/index.js';
import { CacheCapExceeded, CacheInvalidArgument } from './errors.js';
import { tableAndRowTags, type Invalidation, type WriteEvent, type WriteEventSource } from './invalidation.js';
import { CacheMetrics, type EvictionReason } from './metrics.js';
import { CACHE_LIMITS, checkKey, checkTags, checkTtl, resolveCacheOptions, type CacheOptions } from './options.js';
import { Singleflight } from './singleflight.js';
import { coarseNow } from './coarse-time.js';
import { estimateSize } from './size.js';

/** Bytes an entry costs beyond its value, key and tags: the entry object, its Map slot and list links. */
export const ENTRY_OVERHEAD_BYTES = 160;

export interface CacheSetOptions {
  /** Default: the cache's `defaultTtlMs` (60 s). At most 24 h. */
  readonly ttlMs?: number;
  /** At most 16; `purgeTag` drops every entry carrying one. */
  readonly tags?: readonly string[];
}

export interface GetOrComputeOptions extends CacheSetOptions {
  /** Cache an `undefined` result (a miss) this long, at most 10 s; without it misses are not cached. */
  readonly negativeTtlMs?: number;
}

export interface CacheStats {
  readonly entries: number;
  readonly bytes: number;
  /** Lookups answered from the cache (negative entries included). */
  readonly hits: number;
  /** Lookups that found nothing fresh (coalesced computes included). */
  readonly misses: number;
  /** Computes started by `getOrCompute`. */
  readonly computes: number;
  /** `getOrCompute` calls that joined a compute already in flight. */
  readonly coalesced: number;
  /** Entries evicted to stay within maxEntries / maxBytes. */
  readonly evictions: number;
  readonly expirations: number;
  /** Entries removed by `delete`, `purgeTag`, `clear` and write events. */
  readonly invalidations: number;
  /** Computed values not stored because they were larger than maxBytes. */
  readonly oversize: number;
  /** Write events whose `keyFor` threw (the cache was cleared, to stay correct). */
  readonly invalidationErrors: number;
  readonly inflight: number;
}

interface Entry<V> {
  readonly key: string;
  /** undefined: a cached miss. */
  readonly value: V | undefined;
  readonly expiresAt: number;
  readonly size: number;
  readonly tags: readonly string[];
  newer: Entry<V> | undefined;
  older: Entry<V> | undefined;
}

export class Cache<V = unknown> {
  readonly name: string;
  readonly maxEntries: number;
  readonly maxBytes: number;
  readonly defaultTtlMs: number;
  /** The clock's `now()`; the system clock's read coarsely (see coarse-time.ts). */
  readonly #now: () => number;
  readonly #sizeOf: (value: V, key: string) => number;
  readonly #metrics: CacheMetrics | undefined;
  readonly #entries = new Map<string, Entry<V>>();
  readonly #tagged = new Map<string, Set<Entry<V>>>();
  readonly #flights: Singleflight<V | undefined>;
  #newest: Entry<V> | undefined;
  #oldest: Entry<V> | undefined;
  #bytes = 0;
  #hits = 0;
  #misses = 0;
  #computes = 0;
  #coalesced = 0;
  #evictions = 0;
  #expirations = 0;
  #invalidations = 0;
  #oversize = 0;
  #invalidationErrors = 0;

  constructor(options: CacheOptions<V> = {}) {
    const resolved = resolveCacheOptions(options);
    this.name = resolved.name;
    this.maxEntries = resolved.maxEntries;
    this.maxBytes = resolved.maxBytes;
    this.defaultTtlMs = resolved.defaultTtlMs;
    const clock = resolved.clock;
    this.#now = clock === systemClock ? coarseNow : () => clock.now();
    this.#sizeOf = resolved.sizeOf ?? estimateSize;
    this.#metrics = resolved.metrics === undefined ? undefined : new CacheMetrics(resolved.metrics, resolved.name);
    this.#flights = new Singleflight(resolved.clock, resolved.maxInflight, resolved.computeTimeoutMs);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The fresh value, or undefined (a miss, or a cached miss). Synchronous. */
  get(key: string): V | undefined {
    return this.#lookup(key)?.value;
  }

  /** The fresh entry, counted as a hit and made the newest; or undefined, counted as a miss (an expired entry is dropped). */
  #lookup(key: string): Entry<V> | undefined {
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      if (entry.expiresAt > this.#now()) {
        if (entry !== this.#newest) this.#touch(entry);
        this.#hits++;
        this.#metrics?.hit.inc();
        return entry;
      }
      this.#expire(entry);
    }
    this.#misses++;
    this.#metrics?.miss.inc();
    return undefined;
  }

  /** Whether a fresh entry (a cached miss included) is held; counts neither hit nor miss and does not refresh recency. */
  has(key: string): boolean {
    const entry = this.#entries.get(key);
    return entry !== undefined && entry.expiresAt > this.#now();
  }

  /** Stores `value` (not undefined: that is a miss) for `ttlMs`; throws CacheCapExceeded when larger than maxBytes. */
  set(key: string, value: V, options?: CacheSetOptions): void {
    checkKey(key);
    if (value === undefined) throw new CacheInvalidArgument('value', 'undefined means a miss: use delete(), or negativeTtlMs with getOrCompute()');
    const ttlMs = options?.ttlMs === undefined ? this.defaultTtlMs : checkTtl(options.ttlMs, CACHE_LIMITS.maxTtlMs, 'cache.maxTtlMs', 'ttlMs');
    const tags = checkTags(options?.tags);
    // A compute in flight read older data than this value: it must not overwrite it.
    this.#flights.invalidateKey(key);
    this.#store(key, value, ttlMs, tags);
  }

  /**
   * The cached value, or `compute(key)`'s, stored for `ttlMs` with `tags`. Concurrent calls for one
   * key share one compute. A compute that throws stores nothing and rejects every caller.
   */
  getOrCompute(key: string, compute: (key: string) => V | Promise<V>, options?: CacheSetOptions): Promise<V>;
  getOrCompute(key: string, compute: (key: string) => V | undefined | Promise<V | undefined>, options: GetOrComputeOptions): Promise<V | undefined>;
  getOrCompute(key: string, compute: (key: string) => V | undefined | Promise<V | undefined>, options?: GetOrComputeOptions): Promise<V | undefined> {
    const entry = this.#lookup(key);
    if (entry !== undefined) return Promise.resolve(entry.value);
    const pending = this.#flights.pending(key);
    if (pending !== undefined) {
      this.#coalesced++;
      return pending;
    }
    try {
      checkKey(key);
      if (typeof compute !== 'function') throw new CacheInvalidArgument('compute', 'must be a function');
      const ttlMs = options?.ttlMs === undefined ? this.defaultTtlMs : checkTtl(options.ttlMs, CACHE_LIMITS.maxTtlMs, 'cache.maxTtlMs', 'ttlMs');
      const negativeTtlMs =
        options?.negativeTtlMs === undefined ? undefined : checkTtl(options.negativeTtlMs, CACHE_LIMITS.maxNegativeTtlMs, 'cache.maxNegativeTtlMs', 'negativeTtlMs');
      const tags = checkTags(options?.tags);
      const promise = this.#flights.run(key, tags, compute, (value) => {
        if (value === undefined) {
          if (negativeTtlMs !== undefined) this.#store(key, undefined, negativeTtlMs, tags);
          return;
        }
        try {
          this.#store(key, value, ttlMs, tags);
        } catch (error) {
          if (error instanceof CacheCapExceeded) this.#oversize++;
          throw error;
        }
      });
      this.#computes++;
      return promise;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Drops the key (and keeps a compute in flight for it from storing its result); true when an entry was held. */
  delete(key: string): boolean {
    this.#flights.invalidateKey(key);
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#remove(entry, 'invalidated');
    return true;
  }

  /** Drops every entry carrying `tag` (and keeps computes in flight with it from storing); returns how many. */
  purgeTag(tag: string): number {
    this.#flights.invalidateTag(tag);
    const entries = this.#tagged.get(tag);
    if (entries === undefined) return 0;
    const count = entries.size;
    for (const entry of [...entries]) this.#remove(entry, 'invalidated');
    return count;
  }

  clear(): void {
    this.#flights.invalidateAll();
    for (const entry of [...this.#entries.values()]) this.#remove(entry, 'invalidated');
  }

  /**
   * Invalidates on every event `source` emits: the keys and tags `keyFor` maps it to (default:
   * its table and row tags, see `tableTag`/`rowTag`). A `keyFor` that throws clears the whole cache:
   * serving stale data is worse than recomputing. Returns the function that unsubscribes.
   */
  invalidateOn<E = WriteEvent>(source: WriteEventSource<E>, keyFor?: (event: E) => Invalidation | undefined): () => void {
    const map = keyFor ?? (tableAndRowTags as unknown as (event: E) => Invalidation);
    return source.subscribe((event) => {
      let target: Invalidation | undefined;
      try {
        target = map(event);
      } catch {
        this.#invalidationErrors++;
        this.clear();
        return;
      }
      if (target === undefined) return;
      for (const key of target.keys ?? []) this.delete(key);
      for (const tag of target.tags ?? []) this.purgeTag(tag);
    });
  }

  stats(): CacheStats {
    return {
      entries: this.#entries.size,
      bytes: this.#bytes,
      hits: this.#hits,
      misses: this.#misses,
      computes: this.#computes,
      coalesced: this.#coalesced,
      evictions: this.#evictions,
      expirations: this.#expirations,
      invalidations: this.#invalidations,
      oversize: this.#oversize,
      invalidationErrors: this.#invalidationErrors,
      inflight: this.#flights.size,
    };
  }

  // ---- internals -------------------------------------------------------------------------------

  #store(key: string, value: V | undefined, ttlMs: number, tags: readonly string[]): void {
    let size = ENTRY_OVERHEAD_BYTES + 2 * key.length;
    for (const tag of tags) size += 2 * tag.length + 16;
    if (value !== undefined) {
      const valueSize = this.#sizeOf(value, key);
      if (typeof valueSize !== 'number' || Number.isNaN(valueSize) || valueSize < 0) {
        throw new CacheInvalidArgument('sizeOf', `must return a non-negative number, returned ${String(valueSize)}`);
      }
      size += valueSize;
    }
    const previous = this.#entries.get(key);
    if (size > this.maxBytes) {
      // The old value is older than what the caller meant to store: it must not outlive the failure.
      if (previous !== undefined) this.#remove(previous, 'invalidated');
      throw new CacheCapExceeded('cache.maxBytes', this.maxBytes, size);
    }
    if (previous !== undefined) this.#remove(previous, undefined);
    const entry: Entry<V> = { key, value, expiresAt: this.#now() + ttlMs, size, tags, newer: undefined, older: this.#newest };
    this.#entries.set(key, entry);
    if (this.#newest !== undefined) this.#newest.newer = entry;
    this.#newest = entry;
    this.#oldest ??= entry;
    this.#bytes += size;
    for (const tag of tags) {
      let entries = this.#tagged.get(tag);
      if (entries === undefined) this.#tagged.set(tag, (entries = new Set()));
      entries.add(entry);
    }
    // The least recently used end is where expired entries pile up: drop one per write.
    const oldest = this.#oldest;
    if (oldest !== entry && oldest.expiresAt <= this.#now()) this.#expire(oldest);
    while (this.#entries.size > this.maxEntries || this.#bytes > this.maxBytes) {
      this.#remove(this.#oldest!, 'lru');
      this.#evictions++;
    }
    this.#metrics?.size(this.#entries.size, this.#bytes);
  }

  #expire(entry: Entry<V>): void {
    this.#remove(entry, 'expired');
    this.#expirations++;
  }

  #touch(entry: Entry<V>): void {
    const { newer, older } = entry;
    newer!.older = older;
    if (older !== undefined) older.newer = newer;
    else this.#oldest = newer;
    entry.older = this.#newest;
    entry.newer = undefined;
    this.#newest!.newer = entry;
    this.#newest = entry;
  }

  /** Unlinks `entry`; `reason` undefined: replaced by a newer entry for its key (nothing to count). */
  #remove(entry: Entry<V>, reason: EvictionReason | undefined): void {
    this.#entries.delete(entry.key);
    const { newer, older } = entry;
    if (newer !== undefined) newer.older = older;
    else this.#newest = older;
    if (older !== undefined) older.newer = newer;
    else this.#oldest = newer;
    entry.newer = entry.older = undefined;
    this.#bytes -= entry.size;
    for (const tag of entry.tags) {
      const entries = this.#tagged.get(tag);
      if (entries === undefined) continue;
      entries.delete(entry);
      if (entries.size === 0) this.#tagged.delete(tag);
    }
    if (reason === undefined) return;
    if (reason === 'invalidated') this.#invalidations++;
    if (this.#metrics !== undefined) {
      this.#metrics.evicted(reason);
      this.#metrics.size(this.#entries.size, this.#bytes);
    }
  }
}
