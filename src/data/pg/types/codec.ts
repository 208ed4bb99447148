/**
 * What one Postgres type codec is, and the checks every text encoder shares.
 *
 * Decoders read straight from the socket buffer between `start` and `end` (no slice), so a row's
 * columns cost one pass over bytes already in memory. Anything returned must not alias that buffer:
 * the connection reuses it.
 */
import { EncodeFailed, ProtocolError } from '../../errors.js';

export interface PgCodec {
  readonly oid: number;
  readonly name: string;
  readonly arrayOid?: number;
  decodeText(buf: Buffer, start: number, end: number): unknown;
  decodeBinary?(buf: Buffer, start: number, end: number): unknown;
  /** Text-format parameter; throws EncodeFailed for values it cannot encode. */
  encodeText(value: unknown): string;
  encodeBinary?(value: unknown): Buffer;
}

/** A type the application knows by name; its OID is looked up in pg_type when a connection opens. */
export interface CustomType {
  /** pg_type.typname, e.g. 'mood', 'citext', 'hstore'. */
  readonly name: string;
  /** The server's text output of a value → the JS value. */
  decode(text: string): unknown;
  /** A JS value → text the server's input function accepts. */
  encode(value: unknown): string;
}

export type Decoder = (buf: Buffer, start: number, end: number) => unknown;

/** A short description of a value for error messages (never the value itself: it may be secret). */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (Buffer.isBuffer(value)) return 'Buffer';
  if (value instanceof Date) return 'Date';
  return typeof value;
}

export function cannotEncode(typeName: string, value: unknown, why?: string): EncodeFailed {
  return new EncodeFailed(`${describe(value)} as ${typeName}${why === undefined ? '' : `: ${why}`}`);
}

const isWellFormed = (String.prototype as { isWellFormed?: () => boolean }).isWellFormed;

/**
 * Postgres cannot store U+0000 in text, and a lone surrogate would be silently replaced by U+FFFD when
 * written as UTF-8; both are refused rather than altered.
 */
export function checkText(s: string, typeName: string): string {
  if (s.indexOf('\0') !== -1) throw new EncodeFailed(`string as ${typeName}: contains U+0000, which Postgres text cannot hold`);
  if (isWellFormed !== undefined ? !isWellFormed.call(s) : /[\ud800-\udfff]/.test(s) && hasLoneSurrogate(s)) {
    throw new EncodeFailed(`string as ${typeName}: contains a lone UTF-16 surrogate, which is not valid UTF-8`);
  }
  return s;
}

function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      else return true;
    } else if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

/** Buffer's own slice method, which `toString` calls after argument checks we do not need (~25% faster). */
type Sliceable = Buffer & { utf8Slice?: (start: number, end: number) => string };

/** UTF-8 text of a column, straight from the receive buffer. */
export const utf8: (buf: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as Sliceable).utf8Slice === 'function'
    ? (buf, start, end) => (buf as Sliceable).utf8Slice!(start, end)
    : (buf, start, end) => buf.toString('utf8', start, end);

/** A private copy of raw bytes (the receive buffer is reused). */
export function copyBytes(buf: Buffer, start: number, end: number): Buffer {
  const out = Buffer.allocUnsafe(end - start);
  buf.copy(out, 0, start, end);
  return out;
}

/** The server sent a value this codec cannot read; the caller turns it into a failed query, never a crash. */
export function malformed(typeName: string, why = 'malformed value'): ProtocolError {
  return new ProtocolError(`cannot decode ${typeName}: ${why}`);
}
