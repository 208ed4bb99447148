/**
 * The cache's caps and options. Every cap has a static default and a ceiling; an option outside its
 * range is an InvalidDataConfig naming it, a call outside a cap a CacheCapExceeded naming it.
 */
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../../actors/index.js';
import { InvalidDataConfig } from '../errors.js';
import { CacheCapExceeded, CacheInvalidArgument } from './errors.js';

export const CACHE_LIMITS = Object.freeze({
  /** Entries held before the least recently used is evicted (default and ceiling). */
  maxEntries: 131_072,
  /** Estimated bytes held before the least recently used is evicted (default and ceiling). */
  maxBytes: 512 * 1024 * 1024,
  /** The longest TTL: no entry lives forever. */
  maxTtlMs: 24 * 60 * 60 * 1_000,
  /** The longest a miss may be cached. */
  maxNegativeTtlMs: 10_000,
  /** Tags per entry. */
  maxTags: 16,
  /** Computes in flight at once (distinct keys). */
  maxInflight: 131_072,
  /** The longest a compute may take. */
  maxComputeTimeoutMs: 300_000,
});

export const CACHE_DEFAULTS = Object.freeze({
  ttlMs: 60_000,
  maxInflight: 16_384,
  computeTimeoutMs: 30_000,
});

export interface CacheOptions<V> {
  /** Names the cache in metrics (`cache` label). Default `cache-<n>`. */
  readonly name?: string;
  /** Default and ceiling 131,072. */
  readonly maxEntries?: number;
  /** Default and ceiling 512 MiB, as measured by `sizeOf`. */
  readonly maxBytes?: number;
  /** TTL of entries whose call names none (default 60 s, at most 24 h). */
  readonly defaultTtlMs?: number;
  /** Bytes an entry's value holds; default: `estimateSize` (see size.ts). Key and tags are added to it. */
  readonly sizeOf?: (value: V, key: string) => number;
  /** TTLs are measured on its `now()`. Default: the system clock. */
  readonly clock?: Clock;
  /** Hit, miss and eviction counters go to this prom-client registry; none: no metrics. */
  readonly metrics?: Registry;
  /** Distinct keys computing at once; one more is a CacheCapExceeded (default 16,384, at most 131,072). */
  readonly maxInflight?: number;
  /** A compute that has not settled by then fails its callers with CacheComputeTimeout and frees the key (default 30 s, at most 300 s). */
  readonly computeTimeoutMs?: number;
}

export interface ResolvedCacheOptions<V> {
  readonly name: string;
  readonly maxEntries: number;
  readonly maxBytes: number;
  readonly defaultTtlMs: number;
  readonly sizeOf: ((value: V, key: string) => number) | undefined;
  readonly clock: Clock;
  readonly metrics: Registry | undefined;
  readonly maxInflight: number;
  readonly computeTimeoutMs: number;
}

let unnamed = 0;

function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  const resolved = value ?? fallback;
  if (typeof resolved !== 'number' || !Number.isInteger(resolved) || resolved < min || resolved > max) {
    throw new InvalidDataConfig(name, `must be an integer in ${min}..${max}, got ${String(resolved)}`);
  }
  return resolved;
}

export function resolveCacheOptions<V>(options: CacheOptions<V>): ResolvedCacheOptions<V> {
  const name = options.name ?? `cache-${++unnamed}`;
  if (typeof name !== 'string' || !/^[\w.:-]{1,64}$/.test(name)) throw new InvalidDataConfig('cache.name', 'must be 1-64 letters, digits, _ . : or -');
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function' || typeof clock.setTimer !== 'function') throw new InvalidDataConfig('cache.clock', 'must be a Clock');
  if (options.sizeOf !== undefined && typeof options.sizeOf !== 'function') throw new InvalidDataConfig('cache.sizeOf', 'must be a function');
  return {
    name,
    maxEntries: integer('cache.maxEntries', options.maxEntries, CACHE_LIMITS.maxEntries, 1, CACHE_LIMITS.maxEntries),
    maxBytes: integer('cache.maxBytes', options.maxBytes, CACHE_LIMITS.maxBytes, 1, CACHE_LIMITS.maxBytes),
    defaultTtlMs: integer('cache.defaultTtlMs', options.defaultTtlMs, CACHE_DEFAULTS.ttlMs, 1, CACHE_LIMITS.maxTtlMs),
    sizeOf: options.sizeOf,
    clock,
    metrics: options.metrics,
    maxInflight: integer('cache.maxInflight', options.maxInflight, CACHE_DEFAULTS.maxInflight, 1, CACHE_LIMITS.maxInflight),
    computeTimeoutMs: integer('cache.computeTimeoutMs', options.computeTimeoutMs, CACHE_DEFAULTS.computeTimeoutMs, 1, CACHE_LIMITS.maxComputeTimeoutMs),
  };
}

/** A per-call TTL: a positive integer up to `cap`. */
export function checkTtl(ttlMs: unknown, cap: number, capName: string, argument: string): number {
  if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs < 1) throw new CacheInvalidArgument(argument, `must be a positive integer, got ${String(ttlMs)}`);
  if (ttlMs > cap) throw new CacheCapExceeded(capName, cap, ttlMs);
  return ttlMs;
}

const NO_TAGS: readonly string[] = Object.freeze([]);

/** Checks tags (strings, at most 16) and returns them deduplicated and frozen. */
export function checkTags(tags: unknown): readonly string[] {
  if (tags === undefined) return NO_TAGS;
  if (!Array.isArray(tags)) throw new CacheInvalidArgument('tags', 'must be an array of strings');
  if (tags.length > CACHE_LIMITS.maxTags) throw new CacheCapExceeded('cache.maxTags', CACHE_LIMITS.maxTags, tags.length);
  for (const tag of tags) if (typeof tag !== 'string') throw new CacheInvalidArgument('tags', `must be strings, got ${typeof tag}`);
  return tags.length === 0 ? NO_TAGS : Object.freeze([...new Set(tags as string[])]);
}

export function checkKey(key: unknown): string {
  if (typeof key !== 'string') throw new CacheInvalidArgument('key', `must be a string, got ${typeof key}`);
  return key;
}
