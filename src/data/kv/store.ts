/**
 * The KV store every backend implements (memory, SQLite, Postgres), so callers never branch on
 * where the keys live.
 *
 * Keys are text (UTF-8, 1..512 bytes), ordered by their UTF-8 bytes on every backend; values are
 * bytes (at most 16 MiB); a TTL (1 ms .. 30 days) is turned into an expiry time by the store's
 * injected clock when the key is written, so every backend agrees under a simulated clock.
 *
 * Versions: each successful write gets a number from a per-store counter that only grows, across
 * deletes, expiry and re-creation (a memory counter, a Postgres sequence, a SQLite counter row
 * updated in the write's own transaction). So a version both detects lost updates (`setIfVersion`)
 * and serves as a fencing token: whoever holds the larger version wrote later.
 */
import type { DataContext } from '../context.js';

/** Caps of every store; the memory store's key and byte caps may be configured lower. */
export const KV_LIMITS = Object.freeze({
  /** UTF-8 bytes of a key. */
  maxKeyBytes: 512,
  /** Bytes of a value. */
  maxValueBytes: 16 * 1024 * 1024,
  /** The longest TTL: 30 days. */
  maxTtlMs: 30 * 24 * 60 * 60 * 1_000,
  /** Keys one scan page may return. */
  maxScanLimit: 1_000,
  /** Keys a store holds before evicting the least recently used (memory: exactly; SQL: approximately, docs/kv.md). */
  maxKeys: 1_048_576,
  /** Bytes (keys and values) the memory store holds before evicting the least recently used. */
  maxBytes: 1024 * 1024 * 1024,
});

/** Keys a scan page returns when the call does not say. */
export const DEFAULT_SCAN_LIMIT = 1_000;

export interface KvEntry {
  /** The stored bytes (a copy: changing it changes nothing in the store). */
  readonly value: Buffer;
  readonly version: number;
}

export interface KvSetOptions {
  /** Milliseconds until the key expires (1 .. 30 days); none: it lives until deleted. */
  readonly ttlMs?: number;
}

export interface KvScanOptions {
  /** The `next` of the previous page; none: the first page. */
  readonly cursor?: string;
  /** Keys per page, 1..1,000 (default 1,000). */
  readonly limit?: number;
}

export interface KvScanPage {
  /** Live keys under the prefix, in UTF-8 byte order. */
  readonly keys: string[];
  /** Pass as `cursor` for the next page; absent on the last page. */
  readonly next?: string;
}

export interface KvCasResult {
  /** Whether the write (or delete) happened. */
  readonly ok: boolean;
  /**
   * On success the version just written (for a delete, the one removed); on failure the key's
   * current version, or null when it does not exist.
   */
  readonly version: number | null;
}

export interface KvStore {
  /** 'memory', 'sqlite' or 'postgres'. */
  readonly backend: 'memory' | 'sqlite' | 'postgres';
  /** The live entry, or undefined when the key is missing or expired. */
  get(key: string, ctx?: DataContext): Promise<KvEntry | undefined>;
  /** Writes the value (replacing any TTL with `options.ttlMs`'s); resolves with the new version. */
  set(key: string, value: Uint8Array, options?: KvSetOptions, ctx?: DataContext): Promise<number>;
  /** Removes the key; resolves with whether a live key was there. */
  delete(key: string, ctx?: DataContext): Promise<boolean>;
  exists(key: string, ctx?: DataContext): Promise<boolean>;
  /** One page of the live keys starting with `prefix` (taken literally: no wildcards), in UTF-8 byte order. */
  scan(prefix: string, options?: KvScanOptions, ctx?: DataContext): Promise<KvScanPage>;
  /**
   * Writes only if the key's current version is `expectedVersion` (null: only if the key does not
   * exist or has expired). A lease is taken with `null` and renewed with the version it got.
   */
  setIfVersion(key: string, value: Uint8Array, expectedVersion: number | null, options?: KvSetOptions, ctx?: DataContext): Promise<KvCasResult>;
  /** Deletes only if the key's current version is `expectedVersion` (releasing a lease one still holds). */
  deleteIfVersion(key: string, expectedVersion: number, ctx?: DataContext): Promise<KvCasResult>;
  /** Removes up to one bounded batch of expired keys now; resolves with how many. The background sweep calls this. */
  sweepExpired(ctx?: DataContext): Promise<number>;
  /** Stops the background sweep. SQL stores leave their `Database` open: it is the caller's. */
  close(): Promise<void>;
}
