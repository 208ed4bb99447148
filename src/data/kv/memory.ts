/**
 * The in-process KV store: a Map for lookups, an intrusive LRU list for eviction, a sorted key list
 * for `scan`, and an expiry heap for the sweep. Bounded by key count (default and cap 1,048,576) and
 * bytes of keys and values (default and cap 1 GiB): past either, the least recently used key is
 * evicted. Unlike the SQL stores it may therefore lose a key before its TTL; leases that must not
 * vanish belong in a SQL store.
 */
import type { Clock } from '../../actors/index.js';
import type { ChildSpec } from '../../behaviours/index.js';
import type { DataContext } from '../context.js';
import { KvCapExceeded } from './errors.js';
import { checkExpected, checkKey, checkScan, checkValue, compareKeys, copyBytes, expiryOf } from './caps.js';
import { ExpiryHeap } from './expiry-heap.js';
import { integerOption, resolveCommon, type KvCommonOptions } from './options.js';
import { SortedKeys } from './sorted-keys.js';
import { KV_LIMITS, type KvCasResult, type KvEntry, type KvScanOptions, type KvScanPage, type KvSetOptions, type KvStore } from './store.js';
import { Sweeper } from './sweeper.js';

export interface MemoryKvOptions extends KvCommonOptions {
  /** Keys held before the least recently used is evicted (default and cap 1,048,576). */
  readonly maxKeys?: number;
  /** Bytes of keys and values held before the least recently used is evicted (default and cap 1 GiB). */
  readonly maxBytes?: number;
}

export interface MemoryKvStats {
  readonly keys: number;
  readonly bytes: number;
  /** Keys evicted to stay within maxKeys / maxBytes. */
  readonly evictions: number;
  /** Keys removed because they expired (by the sweep or when read). */
  readonly expirations: number;
}

/** Expired keys a scan steps over before it returns a short page (with `next`), so one call stays bounded. */
const MAX_SKIPPED_PER_PAGE = 10_000;

interface Slot {
  readonly key: string;
  value: Buffer;
  version: number;
  /** ms since the epoch; +Infinity when the key does not expire. */
  expiresAt: number;
  /** Key and value bytes. */
  bytes: number;
  heapIndex: number;
  /** Towards the most recently used. */
  newer: Slot | undefined;
  /** Towards the least recently used. */
  older: Slot | undefined;
}

export class MemoryKvStore implements KvStore {
  readonly backend = 'memory' as const;
  readonly maxKeys: number;
  readonly maxBytes: number;
  readonly #clock: Clock;
  readonly #slots = new Map<string, Slot>();
  readonly #order = new SortedKeys();
  readonly #expiring = new ExpiryHeap<Slot>();
  readonly #sweeper: Sweeper;
  readonly #batch: number;
  #newest: Slot | undefined;
  #oldest: Slot | undefined;
  #bytes = 0;
  #version = 0;
  #evictions = 0;
  #expirations = 0;

  constructor(options: MemoryKvOptions = {}) {
    const common = resolveCommon(options);
    this.maxKeys = integerOption('kv.maxKeys', options.maxKeys, KV_LIMITS.maxKeys, 1, KV_LIMITS.maxKeys);
    this.maxBytes = integerOption('kv.maxBytes', options.maxBytes, KV_LIMITS.maxBytes, 1, KV_LIMITS.maxBytes);
    this.#clock = common.clock;
    this.#batch = common.sweepBatch;
    this.#sweeper = new Sweeper({
      clock: common.clock,
      intervalMs: common.sweepIntervalMs,
      batch: common.sweepBatch,
      sweep: () => this.#sweep(),
      nextExpiry: () => this.#expiring.peek()?.expiresAt,
    });
  }

  get size(): number {
    return this.#slots.size;
  }

  stats(): MemoryKvStats {
    return { keys: this.#slots.size, bytes: this.#bytes, evictions: this.#evictions, expirations: this.#expirations };
  }

  get(key: string, _ctx?: DataContext): Promise<KvEntry | undefined> {
    try {
      checkKey(key);
      const slot = this.#live(key);
      if (slot === undefined) return Promise.resolve(undefined);
      this.#touch(slot);
      return Promise.resolve({ value: copyBytes(slot.value), version: slot.version });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  set(key: string, value: Uint8Array, options?: KvSetOptions, _ctx?: DataContext): Promise<number> {
    try {
      const keyBytes = checkKey(key);
      checkValue(value);
      // The clock is read only for a TTL: most writes carry none, and the read is a measurable share of a set.
      const expiresAt = options?.ttlMs === undefined ? null : expiryOf(options, this.#now());
      return Promise.resolve(this.#write(key, keyBytes, value, expiresAt));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  delete(key: string, _ctx?: DataContext): Promise<boolean> {
    try {
      checkKey(key);
      const slot = this.#live(key);
      if (slot !== undefined) this.#remove(slot);
      return Promise.resolve(slot !== undefined);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  exists(key: string, _ctx?: DataContext): Promise<boolean> {
    try {
      checkKey(key);
      return Promise.resolve(this.#live(key) !== undefined);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  scan(prefix: string, options?: KvScanOptions, _ctx?: DataContext): Promise<KvScanPage> {
    try {
      const { cursor, limit } = checkScan(prefix, options);
      const now = this.#now();
      const afterCursor = cursor !== undefined && compareKeys(cursor, prefix) >= 0;
      const keys: string[] = [];
      let skipped = 0;
      for (const key of this.#order.from(afterCursor ? cursor : prefix, afterCursor)) {
        if (!key.startsWith(prefix)) break;
        if (this.#slots.get(key)!.expiresAt <= now) {
          // Bounded work per call: a long run of expired keys ends the page early, with a cursor past them.
          if (++skipped > MAX_SKIPPED_PER_PAGE) return Promise.resolve({ keys, next: key });
          continue;
        }
        // One live key past a full page: there is a next page.
        if (keys.length === limit) return Promise.resolve({ keys, next: keys[limit - 1]! });
        keys.push(key);
      }
      return Promise.resolve({ keys });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  setIfVersion(key: string, value: Uint8Array, expectedVersion: number | null, options?: KvSetOptions, _ctx?: DataContext): Promise<KvCasResult> {
    try {
      const keyBytes = checkKey(key);
      checkValue(value);
      const expected = checkExpected(expectedVersion, true);
      const expiresAt = expiryOf(options, this.#now());
      const current = this.#live(key)?.version ?? null;
      if (current !== expected) return Promise.resolve({ ok: false, version: current });
      return Promise.resolve({ ok: true, version: this.#write(key, keyBytes, value, expiresAt) });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  deleteIfVersion(key: string, expectedVersion: number, _ctx?: DataContext): Promise<KvCasResult> {
    try {
      checkKey(key);
      const expected = checkExpected(expectedVersion, false);
      const slot = this.#live(key);
      if (slot === undefined || slot.version !== expected) return Promise.resolve({ ok: false, version: slot?.version ?? null });
      this.#remove(slot);
      return Promise.resolve({ ok: true, version: expected });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  sweepExpired(_ctx?: DataContext): Promise<number> {
    return Promise.resolve(this.#sweep());
  }

  /** Removes every key (versions keep growing from where they were). */
  clear(): void {
    this.#slots.clear();
    this.#order.clear();
    this.#expiring.clear();
    this.#newest = this.#oldest = undefined;
    this.#bytes = 0;
  }

  /**
   * A child spec for the application's tree: its actor drives this store's sweep of expired keys
   * (ticks through its mailbox), so the sweep is visible in `/tree` and restarted by the tree's
   * rules; until the child starts, and between its death and its restart, the sweep waits.
   */
  sweeperChild(id = 'kv-sweeper'): ChildSpec {
    return this.#sweeper.childSpec(id);
  }

  async close(): Promise<void> {
    await this.#sweeper.close();
  }

  // ---- internals -------------------------------------------------------------------------------

  /** Whole milliseconds, as the SQL stores compare them, so every backend agrees on the instant a key expires. */
  #now(): number {
    return Math.floor(this.#clock.wallNow());
  }

  /** The slot of a live key; an expired one is removed on the way. */
  #live(key: string): Slot | undefined {
    const slot = this.#slots.get(key);
    if (slot === undefined) return undefined;
    // A key without a TTL never expires: no clock read on the read path.
    if (slot.expiresAt !== Number.POSITIVE_INFINITY && slot.expiresAt <= this.#now()) {
      this.#remove(slot);
      this.#expirations++;
      return undefined;
    }
    return slot;
  }

  #write(key: string, keyBytes: number, value: Uint8Array, expiresAt: number | null): number {
    const bytes = keyBytes + value.byteLength;
    if (bytes > this.maxBytes) throw new KvCapExceeded('kv.maxBytes', this.maxBytes, bytes);
    const version = ++this.#version;
    const at = expiresAt ?? Number.POSITIVE_INFINITY;
    let slot = this.#slots.get(key);
    if (slot !== undefined) {
      this.#bytes += bytes - slot.bytes;
      slot.value = copyBytes(value);
      slot.version = version;
      slot.bytes = bytes;
      slot.expiresAt = at;
      this.#touch(slot);
    } else {
      slot = { key, value: copyBytes(value), version, expiresAt: at, bytes, heapIndex: -1, newer: undefined, older: this.#newest };
      this.#slots.set(key, slot);
      this.#order.add(key);
      this.#bytes += bytes;
      if (this.#newest !== undefined) this.#newest.newer = slot;
      this.#newest = slot;
      this.#oldest ??= slot;
    }
    if (expiresAt === null) this.#expiring.remove(slot);
    else {
      this.#expiring.upsert(slot);
      this.#sweeper.expiring(expiresAt);
    }
    // The slot just written is the newest and fits alone, so eviction stops before reaching it.
    while (this.#slots.size > this.maxKeys || this.#bytes > this.maxBytes) {
      this.#remove(this.#oldest!);
      this.#evictions++;
    }
    return version;
  }

  /** Marks `slot` most recently used. */
  #touch(slot: Slot): void {
    if (slot === this.#newest) return;
    const { newer, older } = slot;
    // Unlink (it has a newer neighbour, not being the newest).
    newer!.older = older;
    if (older !== undefined) older.newer = newer;
    else this.#oldest = newer;
    // Relink at the newest end.
    slot.older = this.#newest;
    slot.newer = undefined;
    this.#newest!.newer = slot;
    this.#newest = slot;
  }

  #remove(slot: Slot): void {
    this.#slots.delete(slot.key);
    this.#order.delete(slot.key);
    this.#expiring.remove(slot);
    this.#bytes -= slot.bytes;
    const { newer, older } = slot;
    if (newer !== undefined) newer.older = older;
    else this.#newest = older;
    if (older !== undefined) older.newer = newer;
    else this.#oldest = newer;
    slot.newer = slot.older = undefined;
  }

  /** One bounded batch of the sweep: the expired keys at the top of the heap. */
  #sweep(): number {
    const now = this.#now();
    let removed = 0;
    while (removed < this.#batch) {
      const first = this.#expiring.peek();
      if (first === undefined || first.expiresAt > now) break;
      this.#remove(first);
      removed++;
    }
    this.#expirations += removed;
    return removed;
  }
}

/** A memory KV store. Its sweep runs while keys with a TTL are held; `close()` stops it. */
export function createMemoryKv(options?: MemoryKvOptions): MemoryKvStore {
  return new MemoryKvStore(options);
}
