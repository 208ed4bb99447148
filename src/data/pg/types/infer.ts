/**
 * Encoding by the JS value alone, for parameters whose type the server will infer (oid 0) or whose type
 * we have no codec for, and for text-like columns that take anything printable.
 */
import { arrayLiteral } from './arrays.js';
import { cannotEncode, checkText } from './codec.js';
import { formatTimestamp } from './datetime.js';
import { formatFloat } from './numbers.js';

/** JSON text of a value, or EncodeFailed (bigint, cycles, functions, undefined). */
export function jsonText(value: unknown, typeName: string): string {
  // JSON.stringify would write these as {} and lose their content without a word.
  if (value instanceof Map || value instanceof Set) throw cannotEncode(typeName, value, 'a Map or Set has no JSON form; convert it first');
  let s: string | undefined;
  try {
    s = JSON.stringify(value);
  } catch (cause) {
    throw cannotEncode(typeName, value, cause instanceof Error ? cause.message : 'not serializable to JSON');
  }
  if (s === undefined) throw cannotEncode(typeName, value, 'not serializable to JSON');
  return checkText(s, typeName);
}

/**
 * Text spelling of a JS value: strings as is, numbers as Postgres spells them, booleans t/f, Dates in
 * UTC with offset, Buffers as bytea hex, arrays as array literals, plain objects as JSON.
 */
export function inferText(value: unknown, typeName = 'text'): string {
  switch (typeof value) {
    case 'string':
      return checkText(value, typeName);
    case 'number':
      return formatFloat(value);
    case 'bigint':
      return String(value);
    case 'boolean':
      return value ? 't' : 'f';
    case 'object':
      if (value === null) break;
      if (value instanceof Date) return formatTimestamp(value, typeName);
      if (Buffer.isBuffer(value) || value instanceof Uint8Array) return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
      if (Array.isArray(value)) return arrayLiteral(value, (v) => inferText(v, typeName));
      return jsonText(value, typeName);
  }
  throw cannotEncode(typeName, value);
}

/** A parameter the server will type: null for NULL, bytes go binary (bytea is the natural inference), the rest text. */
export function inferParam(value: unknown): string | Buffer | null {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return inferText(value, 'parameter');
}
