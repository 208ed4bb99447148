/**
 * numeric reads and writes as a decimal string: no JS number holds it exactly. Binary reads produce the
 * same string as Postgres' text output (digits to the value's display scale), including 'NaN',
 * 'Infinity' and '-Infinity'. Parameters: strings (sent as is), numbers, bigints.
 */
import { type PgCodec, cannotEncode, checkText, malformed } from './codec.js';
import { formatFloat } from './numbers.js';
import { ArrayOid, Oid } from './oids.js';

const POS = 0x0000;
const NEG = 0x4000;
const NAN = 0xc000;
const PINF = 0xd000;
const NINF = 0xf000;

const group = (d: number): string => (d < 10 ? `000${d}` : d < 100 ? `00${d}` : d < 1000 ? `0${d}` : String(d));

/** Base-10000 digits → numeric_out's text: integer part unpadded, then exactly `dscale` fraction digits. */
function decodeNumericBinary(buf: Buffer, start: number, end: number): string {
  if (end - start < 8) throw malformed('numeric', 'short header');
  const ndigits = buf.readUInt16BE(start);
  const weight = buf.readInt16BE(start + 2);
  const sign = buf.readUInt16BE(start + 4);
  const dscale = buf.readUInt16BE(start + 6);
  if (sign === NAN) return 'NaN';
  if (sign === PINF) return 'Infinity';
  if (sign === NINF) return '-Infinity';
  if ((sign !== POS && sign !== NEG) || end - start !== 8 + ndigits * 2) throw malformed('numeric', 'bad header');
  const digit = (k: number): number => {
    if (k < 0 || k >= ndigits) return 0;
    const d = buf.readUInt16BE(start + 8 + k * 2);
    if (d > 9999) throw malformed('numeric', 'digit out of range');
    return d;
  };
  let s = sign === NEG ? '-' : '';
  if (weight < 0) s += '0';
  else {
    s += String(digit(0));
    for (let k = 1; k <= weight; k++) s += group(digit(k));
  }
  if (dscale > 0) {
    let frac = '';
    for (let j = 1; frac.length < dscale; j++) frac += group(digit(weight + j));
    s += `.${frac.slice(0, dscale)}`;
  }
  return s;
}

/**
 * A decimal string (optionally signed, with exponent, or NaN/±Infinity) → numeric's binary form.
 * Anything else is refused here instead of sent.
 */
export function encodeNumericBinary(value: unknown): Buffer {
  const s = numericText(value).trim();
  const special = /^([+-]?)(nan|inf|infinity)$/i.exec(s);
  if (special !== null) {
    const lower = special[2]!.toLowerCase();
    if (lower === 'nan' && special[1] !== '') throw cannotEncode('numeric', value, 'not a number');
    return header(0, 0, lower === 'nan' ? NAN : special[1] === '-' ? NINF : PINF, 0);
  }
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(s);
  if (m === null || (m[2] === '' && (m[3] ?? '') === '')) throw cannotEncode('numeric', value, 'not a number');
  const exp = m[4] === undefined ? 0 : Number(m[4]);
  const fracDigits = m[3] ?? '';
  let digits = (m[2] ?? '') + fracDigits;
  // The decimal point sits after `point` digits of `digits`.
  let point = (m[2] ?? '').length + exp;
  const dscale = Math.max(0, fracDigits.length - exp);
  if (dscale > 0x3fff || Math.abs(point) > 0x20000) throw cannotEncode('numeric', value, 'out of range');
  // Align the point to a base-10000 boundary on both sides.
  const lead = (((4 - (point % 4)) % 4) + 4) % 4;
  digits = '0'.repeat(lead) + digits;
  point += lead;
  if (digits.length < point) digits += '0'.repeat(point - digits.length);
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  }
  digits += '0'.repeat((4 - (digits.length % 4)) % 4);
  const groups: number[] = [];
  for (let k = 0; k < digits.length; k += 4) groups.push(Number(digits.slice(k, k + 4)));
  let weight = point / 4 - 1;
  let first = 0;
  while (first < groups.length && groups[first] === 0) {
    first++;
    weight--;
  }
  let last = groups.length;
  while (last > first && groups[last - 1] === 0) last--;
  const kept = groups.slice(first, last);
  const negative = m[1] === '-' && kept.length > 0;
  const out = header(kept.length, kept.length === 0 ? 0 : weight, negative ? NEG : POS, dscale);
  kept.forEach((d, k) => out.writeUInt16BE(d, 8 + k * 2));
  return out;
}

function header(ndigits: number, weight: number, sign: number, dscale: number): Buffer {
  const out = Buffer.alloc(8 + ndigits * 2);
  out.writeUInt16BE(ndigits, 0);
  out.writeInt16BE(weight, 2);
  out.writeUInt16BE(sign, 4);
  out.writeUInt16BE(dscale, 6);
  return out;
}

function numericText(v: unknown): string {
  if (typeof v === 'string') return checkText(v, 'numeric');
  if (typeof v === 'number') return formatFloat(v);
  if (typeof v === 'bigint') return String(v);
  throw cannotEncode('numeric', v);
}

export const numeric: PgCodec = {
  oid: Oid.numeric,
  name: 'numeric',
  arrayOid: ArrayOid.numeric,
  decodeText: (buf, start, end) => buf.toString('latin1', start, end),
  decodeBinary: decodeNumericBinary,
  encodeText: numericText,
  encodeBinary: encodeNumericBinary,
};
