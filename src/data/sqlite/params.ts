/**
 * Parameters as SQLite stores them, checked on the main thread before they cross the hop: booleans
 * bind as 0/1, dates as ISO-8601 text, bigints as INTEGER (within 64 bits), arrays and plain objects
 * as JSON text, Buffers as BLOBs. A value that cannot be stored is an EncodeFailed here, naming its
 * position, rather than a failed batch later.
 */
import { MAX_PARAMETERS } from '../database.js';
import { EncodeFailed, TooManyParameters } from '../errors.js';
import type { Value } from '../values.js';
import type { SqliteParam } from './protocol.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Appends `params`, encoded, to `target` (a batch's flat parameter array: the caller may reuse its
 * own array at once) and returns an upper bound of their msgpack size. On failure nothing is left
 * appended.
 */
export function encodeParams(params: readonly Value[] | undefined, target: SqliteParam[]): number {
  if (params === undefined) return 0;
  if (!Array.isArray(params)) throw new EncodeFailed('parameters must be an array');
  const count = params.length;
  if (count === 0) return 0;
  if (count > MAX_PARAMETERS) throw new TooManyParameters(count, MAX_PARAMETERS);
  const start = target.length;
  let bytes = 4;
  try {
    for (let i = 0; i < count; i++) {
      const value: unknown = params[i];
      switch (typeof value) {
        case 'number':
          target.push(value);
          bytes += 9;
          break;
        case 'string':
          target.push(value);
          bytes += 5 + value.length * 3;
          break;
        case 'bigint':
          target.push(checkInteger(value, i));
          bytes += 9;
          break;
        case 'boolean':
          target.push(value ? 1 : 0);
          bytes += 1;
          break;
        case 'undefined':
          target.push(null);
          bytes += 1;
          break;
        case 'object': {
          const encoded = encodeObject(value, i);
          target.push(encoded);
          bytes += encoded === null ? 1 : typeof encoded === 'string' ? 5 + encoded.length * 3 : 5 + (encoded as Uint8Array).byteLength;
          break;
        }
        default:
          throw new EncodeFailed(`parameter $${i + 1}: a ${typeof value} cannot be stored`);
      }
    }
  } catch (error) {
    target.length = start;
    throw error;
  }
  return bytes;
}

/** `value`, when SQLite's 64-bit INTEGER holds it. */
export function checkInteger(value: bigint, index: number): bigint {
  if (value < INT64_MIN || value > INT64_MAX) throw new EncodeFailed(`parameter $${index + 1}: ${value} is outside SQLite's 64-bit INTEGER`);
  return value;
}

export function encodeObject(value: object | null, index: number): SqliteParam {
  if (value === null) return null;
  if (value instanceof Uint8Array) return value;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new EncodeFailed(`parameter $${index + 1}: an invalid Date`);
    return value.toISOString();
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (Array.isArray(value) || prototype === Object.prototype || prototype === null) {
    try {
      return JSON.stringify(value);
    } catch (error) {
      throw new EncodeFailed(`parameter $${index + 1}: not JSON (${(error as Error).message})`);
    }
  }
  throw new EncodeFailed(`parameter $${index + 1}: a ${(value as { constructor?: { name?: string } }).constructor?.name ?? 'object'} cannot be stored`);
}
