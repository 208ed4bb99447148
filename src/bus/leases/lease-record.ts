/**
 * A lease as one key in a KV store, written only by compare-and-set, so two contenders never both
 * hold it. The KV version of the write that acquired the lease is its fencing token: versions grow
 * per store, so every acquisition (by anyone) gets a token larger than all earlier ones, while a
 * renewal (a new version) keeps the token, which the value carries.
 *
 * Expiry is the store's: the key is written with the lease's TTL, on the store's clock.
 */
import type { KvStore } from '../../data/kv/index.js';

/** What the key holds (JSON). `token` is null in the acquiring write itself: its token is its own version. */
interface LeaseValue {
  readonly holder: string;
  readonly token: number | null;
}

export interface LeaseRecord {
  readonly holder: string;
  /** The fencing token of the holder's term. */
  readonly token: number;
  /** The KV version of the last write (acquisition or renewal): the next renewal expects it. */
  readonly version: number;
}

/** Who holds lease `key` now, or undefined when it is free (never taken, released or expired). */
export async function readLease(store: KvStore, key: string): Promise<LeaseRecord | undefined> {
  const entry = await store.get(key);
  if (entry === undefined) return undefined;
  const value = decode(entry.value);
  return { holder: value.holder, token: value.token ?? entry.version, version: entry.version };
}

/**
 * Takes the lease for `holder` if it is free, or if `holder` itself still holds it from an earlier
 * term (a renewal that landed after the holder had already stepped down): resolves with the new
 * term, whose token is larger than every earlier one, or undefined when someone else holds it.
 */
export async function acquireLease(store: KvStore, key: string, holder: string, ttlMs: number): Promise<LeaseRecord | undefined> {
  const current = await store.get(key);
  if (current !== undefined && decode(current.value).holder !== holder) return undefined;
  const taken = await store.setIfVersion(key, encode({ holder, token: null }), current?.version ?? null, { ttlMs });
  if (!taken.ok) return undefined;
  return { holder, token: taken.version!, version: taken.version! };
}

/** Extends the holder's term by `ttlMs` from now; resolves with the renewed record, or undefined when the lease was lost. */
export async function renewLease(store: KvStore, key: string, held: LeaseRecord, ttlMs: number): Promise<LeaseRecord | undefined> {
  const renewed = await store.setIfVersion(key, encode({ holder: held.holder, token: held.token }), held.version, { ttlMs });
  return renewed.ok ? { ...held, version: renewed.version! } : undefined;
}

/** Frees the lease if the holder's last write is still the current one; resolves with whether it did. */
export async function releaseLease(store: KvStore, key: string, held: LeaseRecord): Promise<boolean> {
  return (await store.deleteIfVersion(key, held.version)).ok;
}

function encode(value: LeaseValue): Buffer {
  return Buffer.from(JSON.stringify(value));
}

function decode(bytes: Buffer): LeaseValue {
  try {
    const value = JSON.parse(bytes.toString('utf8')) as Partial<LeaseValue>;
    if (typeof value.holder === 'string' && (value.token === null || typeof value.token === 'number')) return { holder: value.holder, token: value.token };
  } catch {
    // Not ours: treated as held by nobody we know, so no one takes it until it expires.
  }
  return { holder: '', token: null };
}
