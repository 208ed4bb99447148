/**
 * Arrays of any element codec, text and binary, one or more dimensions, NULL elements.
 *
 * Text decoding walks the bytes once and hands each element's byte range to the element decoder, so
 * unquoted and escape-free quoted elements are decoded in place; only elements with backslash escapes
 * are copied. Lower bounds other than 1 (`[0:2]={...}`) are accepted and dropped: JS arrays start at 0.
 */
import { type Decoder, type PgCodec, cannotEncode, malformed } from './codec.js';

/** Postgres' MAXDIM. */
const MAX_DIMENSIONS = 6;

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN = 123;
const CLOSE = 125;

/** Text array decoder over `decodeElement`; `delimiter` is ',' for every built-in type but box. */
export function arrayTextDecoder(decodeElement: Decoder, name: string, delimiter = 44): Decoder {
  return (buf, start, end) => {
    let i = start;
    if (buf[i] === 91) {
      // '[lo:hi][lo:hi]=' dimension decoration.
      while (i < end && buf[i] !== 61) i++;
      i++;
    }
    const pos = { i };
    const out = parseLevel(buf, pos, end, decodeElement, delimiter, name, 1);
    if (pos.i !== end) throw malformed(name, 'trailing bytes after array');
    return out;
  };
}

function parseLevel(buf: Buffer, pos: { i: number }, end: number, decode: Decoder, delim: number, name: string, depth: number): unknown[] {
  let i = pos.i;
  if (buf[i] !== OPEN || i >= end) throw malformed(name, "expected '{'");
  if (depth > MAX_DIMENSIONS) throw malformed(name, 'too many dimensions');
  i++;
  const out: unknown[] = [];
  if (buf[i] === CLOSE) {
    pos.i = i + 1;
    return out;
  }
  for (;;) {
    if (i >= end) throw malformed(name, 'unterminated array');
    const c = buf[i];
    if (c === OPEN) {
      pos.i = i;
      out.push(parseLevel(buf, pos, end, decode, delim, name, depth + 1));
      i = pos.i;
    } else if (c === QUOTE) {
      const a = ++i;
      let escaped = false;
      while (i < end && buf[i] !== QUOTE) {
        if (buf[i] === BACKSLASH) {
          escaped = true;
          i++;
        }
        i++;
      }
      if (i >= end) throw malformed(name, 'unterminated quoted element');
      out.push(escaped ? decodeEscaped(buf, a, i, decode) : decode(buf, a, i));
      i++;
    } else {
      const a = i;
      while (i < end && buf[i] !== delim && buf[i] !== CLOSE) i++;
      out.push(i - a === 4 && isNull(buf, a) ? null : decode(buf, a, i));
    }
    if (i >= end) throw malformed(name, 'unterminated array');
    const next = buf[i];
    i++;
    if (next === CLOSE) break;
    if (next !== delim) throw malformed(name, 'expected delimiter');
  }
  pos.i = i;
  return out;
}

/** Unquoted NULL, in any case (quoted "NULL" is the string). */
function isNull(buf: Buffer, a: number): boolean {
  return (buf[a]! | 32) === 110 && (buf[a + 1]! | 32) === 117 && (buf[a + 2]! | 32) === 108 && (buf[a + 3]! | 32) === 108;
}

function decodeEscaped(buf: Buffer, a: number, b: number, decode: Decoder): unknown {
  // Backslash and quote are ASCII, never part of a UTF-8 multibyte sequence: unescaping bytes is safe.
  const out = Buffer.allocUnsafe(b - a);
  let n = 0;
  for (let i = a; i < b; i++) {
    if (buf[i] === BACKSLASH) i++;
    out[n++] = buf[i]!;
  }
  return decode(out, 0, n);
}

/** Binary array decoder: ndim, flags, element oid, (size, lower bound) per dimension, then elements. */
export function arrayBinaryDecoder(decodeElement: Decoder, name: string): Decoder {
  return (buf, start, end) => {
    if (end - start < 12) throw malformed(name, 'short array header');
    const ndim = buf.readInt32BE(start);
    if (ndim === 0) return [];
    if (ndim < 0 || ndim > MAX_DIMENSIONS || end - start < 12 + ndim * 8) throw malformed(name, 'bad dimensions');
    const sizes: number[] = [];
    for (let d = 0; d < ndim; d++) {
      const size = buf.readInt32BE(start + 12 + d * 8);
      if (size < 0) throw malformed(name, 'bad dimension size');
      sizes.push(size);
    }
    const pos = { i: start + 12 + ndim * 8 };
    const out = readLevel(buf, pos, end, sizes, 0, decodeElement, name);
    if (pos.i !== end) throw malformed(name, 'trailing bytes after array');
    return out;
  };
}

function readLevel(buf: Buffer, pos: { i: number }, end: number, sizes: number[], d: number, decode: Decoder, name: string): unknown[] {
  const size = sizes[d]!;
  // Every element takes at least its 4-byte length, which bounds what a lying header can make us allocate.
  if (size > (end - pos.i) / 4) throw malformed(name, 'dimension larger than the value');
  const out = new Array<unknown>(size);
  if (d < sizes.length - 1) {
    for (let k = 0; k < size; k++) out[k] = readLevel(buf, pos, end, sizes, d + 1, decode, name);
    return out;
  }
  let i = pos.i;
  for (let k = 0; k < size; k++) {
    if (i + 4 > end) throw malformed(name, 'truncated element');
    const len = buf.readInt32BE(i);
    i += 4;
    if (len === -1) out[k] = null;
    else {
      if (len < 0 || i + len > end) throw malformed(name, 'truncated element');
      out[k] = decode(buf, i, i + len);
      i += len;
    }
  }
  pos.i = i;
  return out;
}

/** Quotes an element for an array literal: always quoted, so no content is ever mistaken for syntax. */
function quote(s: string): string {
  let needs = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === QUOTE || c === BACKSLASH) {
      needs = true;
      break;
    }
  }
  return needs ? `"${s.replace(/["\\]/g, '\\$&')}"` : `"${s}"`;
}

/** Whether a nested array holds any element (NULL counts); `[[], []]` holds none. */
function hasElements(value: readonly unknown[]): boolean {
  return value.some((v) => !Array.isArray(v) || hasElements(v));
}

/**
 * Array literal `{"a","b",NULL,{...}}`; null and undefined elements are NULL. Postgres arrays with no
 * elements have no dimensions, so `[[]]` is written `{}` (the server refuses `{{}}`).
 */
export function arrayLiteral(value: readonly unknown[], encodeElement: (v: unknown) => string, depth = 1): string {
  if (depth > MAX_DIMENSIONS) throw cannotEncode('array', value, `more than ${MAX_DIMENSIONS} dimensions`);
  if (depth === 1 && !hasElements(value)) return '{}';
  let s = '{';
  for (let k = 0; k < value.length; k++) {
    if (k > 0) s += ',';
    const v = value[k];
    if (v === null || v === undefined) s += 'NULL';
    else if (Array.isArray(v)) s += arrayLiteral(v, encodeElement, depth + 1);
    else s += quote(encodeElement(v));
  }
  return s + '}';
}

/** The shape of a rectangular nested JS array, or an EncodeFailed if it is ragged. */
function dimensionsOf(value: readonly unknown[], name: string): number[] {
  const dims: number[] = [];
  let level: unknown = value;
  while (Array.isArray(level)) {
    dims.push(level.length);
    if (dims.length > MAX_DIMENSIONS) throw cannotEncode(name, value, `more than ${MAX_DIMENSIONS} dimensions`);
    level = level[0];
  }
  // No elements: a dimensionless empty array. Otherwise a zero dimension is a ragged array, caught by the walk.
  return hasElements(value) ? dims : [];
}

/** Binary array: header, then each element's length and bytes; every sub-array must be the same shape. */
export function encodeArrayBinary(value: unknown, element: PgCodec, name: string): Buffer {
  if (!Array.isArray(value)) throw cannotEncode(name, value);
  const encode = element.encodeBinary;
  if (encode === undefined) throw cannotEncode(name, value, `${element.name} has no binary encoding`);
  const dims = dimensionsOf(value, name);
  const parts: Buffer[] = [];
  let hasNull = 0;
  const walk = (level: unknown, d: number): void => {
    if (d < dims.length) {
      if (!Array.isArray(level) || level.length !== dims[d]) throw cannotEncode(name, value, 'sub-arrays differ in shape');
      for (const v of level) walk(v, d + 1);
      return;
    }
    if (Array.isArray(level)) throw cannotEncode(name, value, 'sub-arrays differ in shape');
    const len = Buffer.allocUnsafe(4);
    if (level === null || level === undefined) {
      hasNull = 1;
      len.writeInt32BE(-1);
      parts.push(len);
    } else {
      const bytes = encode(level);
      len.writeInt32BE(bytes.length);
      parts.push(len, bytes);
    }
  };
  if (dims.length > 0) walk(value, 0);
  const header = Buffer.allocUnsafe(12 + dims.length * 8);
  header.writeInt32BE(dims.length, 0);
  header.writeInt32BE(hasNull, 4);
  header.writeUInt32BE(element.oid, 8);
  dims.forEach((size, d) => {
    header.writeInt32BE(size, 12 + d * 8);
    header.writeInt32BE(1, 16 + d * 8);
  });
  return Buffer.concat([header, ...parts]);
}

/** The array codec of an element codec, registered under the element's `arrayOid`. */
export function arrayCodec(element: PgCodec, arrayOid: number): PgCodec {
  const name = `${element.name}[]`;
  const decodeBinary = element.decodeBinary;
  return {
    oid: arrayOid,
    name,
    decodeText: arrayTextDecoder(element.decodeText, name),
    decodeBinary: decodeBinary === undefined ? undefined : arrayBinaryDecoder(decodeBinary, name),
    encodeText: (v) => {
      if (!Array.isArray(v)) throw cannotEncode(name, v);
      return arrayLiteral(v, element.encodeText);
    },
    encodeBinary: element.encodeBinary === undefined ? undefined : (v) => encodeArrayBinary(v, element, name),
  };
}
