/**
 * Values on the worker side of the hop: parameters as SQLite binds them, and rows as they leave.
 *
 * Statements run with better-sqlite3's `safeIntegers`, so every INTEGER arrives as a bigint and none
 * loses precision; a row's bigints that fit in a double become numbers again here, so only integers
 * beyond 2^53 reach the caller as bigint. The same pass estimates the row's encoded size, so a reply
 * never grows past the placement's payload cap.
 */
import type { SqliteParam } from './protocol.js';

/**
 * Set when settleRow meets a BLOB: msgpack hands BLOBs over as Uint8Arrays, and the main thread
 * turns them back into Buffers only for the results that have any.
 */
export const blobs = { seen: false };

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Integral numbers bind as INTEGER (better-sqlite3 binds every number as REAL). In place: the array is the worker's own copy. */
export function bindable(params: SqliteParam[]): SqliteParam[] {
  for (let i = 0; i < params.length; i++) {
    const value = params[i];
    if (typeof value === 'number' && Number.isSafeInteger(value)) params[i] = BigInt(value);
  }
  return params;
}

/** An INTEGER as the caller sees it: a number when it is exact as one, else the bigint. */
export function fromInteger(value: number | bigint): number | bigint {
  return typeof value === 'bigint' && value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value;
}

/**
 * Turns the row's safe bigints into numbers (in place) and returns an upper bound of its msgpack
 * size: strings count 3 bytes per UTF-16 unit, the most UTF-8 needs.
 */
export function settleRow(row: Record<string, unknown>, columns: readonly string[]): number {
  let bytes = 4;
  for (let i = 0; i < columns.length; i++) {
    const name = columns[i]!;
    const value = row[name];
    switch (typeof value) {
      case 'bigint':
        if (value >= MIN_SAFE && value <= MAX_SAFE) row[name] = Number(value);
        bytes += 10;
        break;
      case 'string':
        bytes += 5 + value.length * 3;
        break;
      case 'object':
        if (value === null) bytes += 1;
        else {
          bytes += 5 + (value as Uint8Array).byteLength;
          blobs.seen = true;
        }
        break;
      default:
        bytes += 9;
    }
  }
  return bytes;
}

/** The exact UTF-8 size of a row, for one whose estimate is over the cap (the estimate may be 3x). */
export function exactRowBytes(row: Record<string, unknown>, columns: readonly string[]): number {
  let bytes = 4;
  for (const name of columns) {
    const value = row[name];
    if (typeof value === 'string') bytes += 5 + Buffer.byteLength(value);
    else if (value instanceof Uint8Array) bytes += 5 + value.byteLength;
    else bytes += 10;
  }
  return bytes;
}

/** Buffers again for the Uint8Arrays a decoded row holds (views, no copy). */
export function restoreBlobs(rows: readonly Record<string, unknown>[]): void {
  for (const row of rows) {
    for (const name in row) {
      const value = row[name];
      if (value instanceof Uint8Array && !Buffer.isBuffer(value)) row[name] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    }
  }
}
