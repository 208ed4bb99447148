/** Text-like, bool, bytea, uuid and json codecs. */
import { type PgCodec, cannotEncode, checkText, copyBytes, malformed, utf8 } from './codec.js';
import { inferText, jsonText } from './infer.js';
import { ArrayOid, Oid } from './oids.js';

/** A text-like type: reads as a string, takes any value with a text spelling (numbers, Dates, ...). */
function textLike(oidValue: number, name: string, arrayOid: number): PgCodec {
  return {
    oid: oidValue,
    name,
    arrayOid,
    decodeText: utf8,
    decodeBinary: utf8,
    encodeText: (v) => inferText(v, name),
    encodeBinary: (v) => Buffer.from(inferText(v, name), 'utf8'),
  };
}

/** A type we read as its text output and write from any value's text spelling (interval, inet, ...). */
export function textOnly(oidValue: number, name: string, arrayOid: number): PgCodec {
  return { oid: oidValue, name, arrayOid, decodeText: utf8, encodeText: (v) => inferText(v, name) };
}

export const text = textLike(Oid.text, 'text', ArrayOid.text);
export const varchar = textLike(Oid.varchar, 'varchar', ArrayOid.varchar);
export const bpchar = textLike(Oid.bpchar, 'bpchar', ArrayOid.bpchar);
export const name = textLike(Oid.name, 'name', ArrayOid.name);
export const char = textLike(Oid.char, 'char', ArrayOid.char);

export const bool: PgCodec = {
  oid: Oid.bool,
  name: 'bool',
  arrayOid: ArrayOid.bool,
  decodeText: (buf, start) => buf[start] === 116,
  decodeBinary: (buf, start, end) => {
    if (end - start !== 1) throw malformed('bool', 'expected 1 byte');
    return buf[start] !== 0;
  },
  encodeText: (v) => {
    if (typeof v === 'boolean') return v ? 't' : 'f';
    if (typeof v === 'string') return checkText(v, 'bool');
    throw cannotEncode('bool', v);
  },
  encodeBinary: (v) => {
    if (typeof v !== 'boolean') throw cannotEncode('bool', v, 'binary format takes a boolean');
    return Buffer.from([v ? 1 : 0]);
  },
};

/** bytea text output: hex ('\x0a0b') by default, the escape format if bytea_output says so. */
function decodeByteaText(buf: Buffer, start: number, end: number): Buffer {
  if (buf[start] === 92 && buf[start + 1] === 120) {
    if ((end - start) % 2 !== 0) throw malformed('bytea', 'odd hex length');
    const out = Buffer.from(buf.toString('latin1', start + 2, end), 'hex');
    if (out.length * 2 !== end - start - 2) throw malformed('bytea', 'bad hex digit');
    return out;
  }
  const out = Buffer.allocUnsafe(end - start);
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = buf[i]!;
    if (c !== 92) out[n++] = c;
    else if (buf[i + 1] === 92) {
      out[n++] = 92;
      i++;
    } else {
      const a = buf[i + 1]! - 48;
      const b = buf[i + 2]! - 48;
      const d = buf[i + 3]! - 48;
      if (i + 3 >= end || !(a >= 0 && a <= 3 && b >= 0 && b <= 7 && d >= 0 && d <= 7)) throw malformed('bytea', 'bad escape');
      out[n++] = (a << 6) | (b << 3) | d;
      i += 3;
    }
  }
  return out.subarray(0, n);
}

function asBytes(v: unknown): Buffer | undefined {
  if (Buffer.isBuffer(v)) return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return undefined;
}

export const bytea: PgCodec = {
  oid: Oid.bytea,
  name: 'bytea',
  arrayOid: ArrayOid.bytea,
  decodeText: decodeByteaText,
  decodeBinary: copyBytes,
  encodeText: (v) => {
    const b = asBytes(v);
    // A string is refused rather than guessed at: its UTF-8 bytes, or bytea escape syntax?
    if (b === undefined) throw cannotEncode('bytea', v, 'pass a Buffer');
    return `\\x${b.toString('hex')}`;
  },
  encodeBinary: (v) => {
    const b = asBytes(v);
    if (b === undefined) throw cannotEncode('bytea', v, 'pass a Buffer');
    return b;
  },
};

export const uuid: PgCodec = {
  oid: Oid.uuid,
  name: 'uuid',
  arrayOid: ArrayOid.uuid,
  decodeText: (buf, start, end) => buf.toString('latin1', start, end),
  decodeBinary: (buf, start, end) => {
    if (end - start !== 16) throw malformed('uuid', 'not 16 bytes');
    const h = buf.toString('hex', start, end);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  },
  encodeText: (v) => {
    if (typeof v !== 'string') throw cannotEncode('uuid', v);
    return checkText(v, 'uuid');
  },
  encodeBinary: (v) => {
    const hex = typeof v === 'string' ? v.replace(/[-{}]/g, '') : '';
    if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw cannotEncode('uuid', v, 'not a UUID');
    return Buffer.from(hex, 'hex');
  },
};

function parseJson(buf: Buffer, start: number, end: number, name: string): unknown {
  try {
    return JSON.parse(buf.toString('utf8', start, end));
  } catch {
    throw malformed(name, 'invalid JSON');
  }
}

/** Strings are taken as JSON text already (what the server will parse); anything else is stringified. */
function encodeJson(v: unknown, name: string): string {
  if (typeof v === 'string') return checkText(v, name);
  if (asBytes(v) !== undefined) throw cannotEncode(name, v, 'pass JSON text or a value');
  return jsonText(v, name);
}

export const json: PgCodec = {
  oid: Oid.json,
  name: 'json',
  arrayOid: ArrayOid.json,
  decodeText: (buf, start, end) => parseJson(buf, start, end, 'json'),
  decodeBinary: (buf, start, end) => parseJson(buf, start, end, 'json'),
  encodeText: (v) => encodeJson(v, 'json'),
  encodeBinary: (v) => Buffer.from(encodeJson(v, 'json'), 'utf8'),
};

/** jsonb's binary form is a version byte (1) and the JSON text. */
export const jsonb: PgCodec = {
  oid: Oid.jsonb,
  name: 'jsonb',
  arrayOid: ArrayOid.jsonb,
  decodeText: (buf, start, end) => parseJson(buf, start, end, 'jsonb'),
  decodeBinary: (buf, start, end) => {
    if (buf[start] !== 1) throw malformed('jsonb', `unknown jsonb version ${buf[start]}`);
    return parseJson(buf, start + 1, end, 'jsonb');
  },
  encodeText: (v) => encodeJson(v, 'jsonb'),
  encodeBinary: (v) => {
    const body = Buffer.from(encodeJson(v, 'jsonb'), 'utf8');
    const out = Buffer.allocUnsafe(body.length + 1);
    out[0] = 1;
    body.copy(out, 1);
    return out;
  },
};
