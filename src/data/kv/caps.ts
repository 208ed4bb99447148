/**
 * Argument checks shared by every KV backend: the same call fails the same way, with the same typed
 * error naming the cap, whichever store is underneath (and before any I/O).
 */
import { KvCapExceeded, KvInvalidArgument } from './errors.js';
import { DEFAULT_SCAN_LIMIT, KV_LIMITS, type KvScanOptions, type KvSetOptions } from './store.js';

const wellFormed = String.prototype as unknown as { isWellFormed(this: string): boolean };

/** Checks a key and returns its UTF-8 length. */
export function checkKey(key: unknown, argument = 'key'): number {
  if (typeof key !== 'string') throw new KvInvalidArgument(argument, `must be a string, got ${typeof key}`);
  if (key.length === 0) throw new KvInvalidArgument(argument, 'must not be empty');
  const bytes = Buffer.byteLength(key);
  if (bytes > KV_LIMITS.maxKeyBytes) throw new KvCapExceeded('kv.maxKeyBytes', KV_LIMITS.maxKeyBytes, bytes);
  // A lone surrogate has no UTF-8 form: it would be stored as U+FFFD and read back as another key.
  if (!wellFormed.isWellFormed.call(key)) throw new KvInvalidArgument(argument, 'is not well-formed UTF-16 (a lone surrogate)');
  return bytes;
}

/** Checks a value and returns it. */
export function checkValue(value: unknown): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new KvInvalidArgument('value', 'must be a Buffer or Uint8Array');
  if (value.byteLength > KV_LIMITS.maxValueBytes) throw new KvCapExceeded('kv.maxValueBytes', KV_LIMITS.maxValueBytes, value.byteLength);
  return value;
}

/** The expiry time (ms since the epoch on the store's clock) for a write at `now`; null: none. */
export function expiryOf(options: KvSetOptions | undefined, now: number): number | null {
  const ttlMs = options?.ttlMs;
  if (ttlMs === undefined) return null;
  if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs < 1) throw new KvInvalidArgument('ttlMs', `must be a positive integer, got ${String(ttlMs)}`);
  if (ttlMs > KV_LIMITS.maxTtlMs) throw new KvCapExceeded('kv.maxTtlMs', KV_LIMITS.maxTtlMs, ttlMs);
  return now + ttlMs;
}

/** Checks an expected version: null (must not exist) or a positive safe integer. */
export function checkExpected(expected: unknown, allowNull: boolean): number | null {
  if (expected === null && allowNull) return null;
  if (typeof expected !== 'number' || !Number.isSafeInteger(expected) || expected < 1) {
    throw new KvInvalidArgument('expectedVersion', `must be a positive integer${allowNull ? ' or null' : ''}, got ${String(expected)}`);
  }
  return expected;
}

export interface CheckedScan {
  readonly prefix: string;
  readonly cursor: string | undefined;
  readonly limit: number;
}

export function checkScan(prefix: unknown, options: KvScanOptions | undefined): CheckedScan {
  if (typeof prefix !== 'string') throw new KvInvalidArgument('prefix', `must be a string, got ${typeof prefix}`);
  if (prefix.length > 0) checkKey(prefix, 'prefix');
  const cursor = options?.cursor;
  if (cursor !== undefined) checkKey(cursor, 'cursor');
  const limit = options?.limit ?? DEFAULT_SCAN_LIMIT;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) throw new KvInvalidArgument('limit', `must be a positive integer, got ${String(limit)}`);
  if (limit > KV_LIMITS.maxScanLimit) throw new KvCapExceeded('kv.maxScanLimit', KV_LIMITS.maxScanLimit, limit);
  return { prefix, cursor, limit };
}

/**
 * The exclusive upper bound of the keys starting with `prefix`, in byte order: the prefix followed
 * by 0xFF, a byte UTF-8 never contains, so every key that starts with the prefix sorts below it and
 * none that does not falls between.
 */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.allocUnsafe(prefix.length + 1);
  prefix.copy(end);
  end[prefix.length] = 0xff;
  return end;
}

/**
 * Orders strings by their UTF-8 bytes (that is, by code point) without encoding them: UTF-16 code
 * units sort the same way except that surrogates (astral characters) must come after U+E000..U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/** Copies bytes into a Buffer of their own (a caller's later changes must not reach the store, nor the store's the caller). */
export function copyBytes(value: Uint8Array): Buffer {
  const copy = Buffer.allocUnsafe(value.byteLength);
  copy.set(value);
  return copy;
}
