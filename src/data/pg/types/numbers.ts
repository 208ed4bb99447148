/**
 * Integer, float and oid codecs. int8 reads as `bigint` (a JS number would silently round past 2^53);
 * numbers, bigints and numeric strings are all accepted as parameters.
 */
import { type PgCodec, cannotEncode, checkText, malformed } from './codec.js';
import { ArrayOid, Oid } from './oids.js';

/** Text integer straight from the bytes: cheaper than slicing a string and calling Number(). */
export function decodeIntText(buf: Buffer, start: number, end: number): number {
  let i = start;
  let neg = false;
  if (buf[i] === 45) {
    neg = true;
    i++;
  }
  if (i >= end) throw malformed('integer', 'empty');
  let n = 0;
  for (; i < end; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) throw malformed('integer');
    n = n * 10 + d;
  }
  return neg ? -n : n;
}

/** NaN, ±Infinity and -0 spelled the way Postgres' float input reads them. */
export function formatFloat(n: number): string {
  if (n !== n) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  if (n === 0 && 1 / n < 0) return '-0';
  return String(n);
}

type IntBounds = { name: string; min: number; max: number };

function toInteger(value: unknown, b: IntBounds): number {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'bigint') n = Number(value);
  else if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) n = Number(value);
  else throw cannotEncode(b.name, value);
  if (!Number.isInteger(n)) throw cannotEncode(b.name, value, 'not an integer');
  if (n < b.min || n > b.max) throw cannotEncode(b.name, value, `out of range ${b.min}..${b.max}`);
  return n === 0 ? 0 : n;
}

function encodeIntText(value: unknown, b: IntBounds): string {
  // Strings go through unchanged: the server's own parser accepts more spellings than ours would.
  if (typeof value === 'string') return checkText(value, b.name);
  return String(toInteger(value, b));
}

const INT2: IntBounds = { name: 'int2', min: -32768, max: 32767 };
const INT4: IntBounds = { name: 'int4', min: -2147483648, max: 2147483647 };
const OID: IntBounds = { name: 'oid', min: 0, max: 4294967295 };

/** Fixed-width binary values are checked for their width: a lying length must not read a neighbour's bytes. */
function width(name: string, size: number, start: number, end: number): void {
  if (end - start !== size) throw malformed(name, `expected ${size} bytes, got ${end - start}`);
}

export const int2: PgCodec = {
  oid: Oid.int2,
  name: 'int2',
  arrayOid: ArrayOid.int2,
  decodeText: decodeIntText,
  decodeBinary: (buf, start, end) => {
    width('int2', 2, start, end);
    return buf.readInt16BE(start);
  },
  encodeText: (v) => encodeIntText(v, INT2),
  encodeBinary: (v) => {
    const out = Buffer.allocUnsafe(2);
    out.writeInt16BE(toInteger(v, INT2));
    return out;
  },
};

export const int4: PgCodec = {
  oid: Oid.int4,
  name: 'int4',
  arrayOid: ArrayOid.int4,
  decodeText: decodeIntText,
  decodeBinary: (buf, start, end) => {
    width('int4', 4, start, end);
    return buf.readInt32BE(start);
  },
  encodeText: (v) => encodeIntText(v, INT4),
  encodeBinary: (v) => {
    const out = Buffer.allocUnsafe(4);
    out.writeInt32BE(toInteger(v, INT4));
    return out;
  },
};

export const oid: PgCodec = {
  oid: Oid.oid,
  name: 'oid',
  arrayOid: ArrayOid.oid,
  decodeText: decodeIntText,
  decodeBinary: (buf, start, end) => {
    width('oid', 4, start, end);
    return buf.readUInt32BE(start);
  },
  encodeText: (v) => encodeIntText(v, OID),
  encodeBinary: (v) => {
    const out = Buffer.allocUnsafe(4);
    out.writeUInt32BE(toInteger(v, OID));
    return out;
  },
};

const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;

function toBigInt8(value: unknown): bigint {
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw cannotEncode('int8', value, 'not an integer');
    n = BigInt(value);
  } else if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) n = BigInt(value.trim());
  else throw cannotEncode('int8', value);
  if (n < INT8_MIN || n > INT8_MAX) throw cannotEncode('int8', value, 'out of range');
  return n;
}

export const int8: PgCodec = {
  oid: Oid.int8,
  name: 'int8',
  arrayOid: ArrayOid.int8,
  decodeText: (buf, start, end) => {
    // Up to 15 digits a double holds exactly; only longer values pay for BigInt's string parser.
    if (end - start <= 15) return BigInt(decodeIntText(buf, start, end));
    const s = buf.toString('latin1', start, end);
    if (!/^-?\d+$/.test(s)) throw malformed('int8');
    return BigInt(s);
  },
  decodeBinary: (buf, start, end) => {
    width('int8', 8, start, end);
    return buf.readBigInt64BE(start);
  },
  encodeText: (v) => (typeof v === 'string' ? checkText(v, 'int8') : String(toBigInt8(v))),
  encodeBinary: (v) => {
    const out = Buffer.allocUnsafe(8);
    out.writeBigInt64BE(toBigInt8(v));
    return out;
  },
};

function decodeFloatText(buf: Buffer, start: number, end: number): number {
  // Postgres spells the specials NaN, Infinity, -Infinity, all of which Number() reads.
  const n = Number(buf.toString('latin1', start, end));
  if (n !== n && !(end - start === 3 && buf[start] === 78)) throw malformed('float');
  return n;
}

function toFloat(value: unknown, name: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  throw cannotEncode(name, value);
}

function encodeFloatText(value: unknown, name: string): string {
  if (typeof value === 'string') return checkText(value, name);
  return formatFloat(toFloat(value, name));
}

/**
 * The shortest decimal that reads back as the same float4, which is what Postgres' float4 text output
 * prints (and so what a text-format read returns); binary reads agree with text reads this way.
 */
export function shortestFloat4(v: number): number {
  if (v !== v || v === 0 || v === Infinity || v === -Infinity) return v;
  for (let p = 1; p < 9; p++) {
    const x = Number(v.toPrecision(p));
    if (Math.fround(x) === v) return x;
  }
  return Number(v.toPrecision(9));
}

export const float4: PgCodec = {
  oid: Oid.float4,
  name: 'float4',
  arrayOid: ArrayOid.float4,
  decodeText: decodeFloatText,
  decodeBinary: (buf, start, end) => {
    width('float4', 4, start, end);
    return shortestFloat4(buf.readFloatBE(start));
  },
  encodeText: (v) => encodeFloatText(v, 'float4'),
  encodeBinary: (v) => {
    const out = Buffer.allocUnsafe(4);
    out.writeFloatBE(toFloat(v, 'float4'));
    return out;
  },
};

export const float8: PgCodec = {
  oid: Oid.float8,
  name: 'float8',
  arrayOid: ArrayOid.float8,
  decodeText: decodeFloatText,
  decodeBinary: (buf, start, end) => {
    width('float8', 8, start, end);
    return buf.readDoubleBE(start);
  },
  encodeText: (v) => encodeFloatText(v, 'float8'),
  encodeBinary: (v) => {
    const out = Buffer.allocUnsafe(8);
    out.writeDoubleBE(toFloat(v, 'float8'));
    return out;
  },
};
