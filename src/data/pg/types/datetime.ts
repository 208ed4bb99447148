/**
 * date, timestamp and timestamptz.
 *
 * - timestamptz and timestamp read as `Date`. timestamp (without time zone) is taken as UTC wall-clock
 *   time. A Date holds milliseconds: microseconds are truncated (floored) on decode, so values round-trip
 *   exactly over the millisecond domain.
 * - date reads as a `'YYYY-MM-DD'` string (`'YYYY-MM-DD BC'` before year 1), exactly Postgres' ISO
 *   output: a calendar date is not an instant, and a Date at UTC midnight shows as the previous day in
 *   any time zone west of Greenwich. Binary and text reads give the same string.
 * - `infinity` / `-infinity` read as those strings for all three types (no Date can hold them);
 *   timestamps outside the Date range (beyond ±275760 years) read as ISO strings too.
 * - Parameters: a Date (encoded in UTC with an explicit `+00` offset), a string (sent as is), or
 *   ±Infinity. Text decoding assumes DateStyle ISO, which the connection sets at startup.
 */
import { type PgCodec, cannotEncode, checkText, malformed } from './codec.js';
import { ArrayOid, Oid } from './oids.js';

const MS_PER_DAY = 86_400_000;
/** Days and milliseconds from 1970-01-01 to Postgres' epoch 2000-01-01. */
const PG_EPOCH_DAYS = 10_957;
const PG_EPOCH_MS = PG_EPOCH_DAYS * MS_PER_DAY;
const MAX_DATE_MS = 8.64e15;

/** Days since 1970-01-01 of a proleptic Gregorian date (astronomical year: 0 is 1 BC). */
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Inverse of daysFromCivil: [astronomical year, month 1-12, day 1-31]. */
export function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : String(n));
const pad4 = (n: number): string => (n < 1000 ? `000${n}`.slice(-4) : String(n));

/** 'YYYY-MM-DD' or 'YYYY-MM-DD BC', the way Postgres prints a date (BC years count from 1). */
function formatDays(days: number): string {
  const [y, m, d] = civilFromDays(days);
  return y > 0 ? `${pad4(y)}-${pad2(m)}-${pad2(d)}` : `${pad4(1 - y)}-${pad2(m)}-${pad2(d)} BC`;
}

/** Postgres input spelling of an instant: UTC, explicit offset, millisecond precision, BC suffix. */
export function formatTimestamp(date: Date, typeName = 'timestamptz'): string {
  const ms = date.getTime();
  if (ms !== ms) throw cannotEncode(typeName, date, 'invalid Date');
  const days = Math.floor(ms / MS_PER_DAY);
  const t = ms - days * MS_PER_DAY;
  const [y, m, d] = civilFromDays(days);
  const time = `${pad2(Math.floor(t / 3_600_000))}:${pad2(Math.floor(t / 60_000) % 60)}:${pad2(Math.floor(t / 1000) % 60)}.${pad3(t % 1000)}+00`;
  return y > 0 ? `${pad4(y)}-${pad2(m)}-${pad2(d)} ${time}` : `${pad4(1 - y)}-${pad2(m)}-${pad2(d)} ${time} BC`;
}

const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 48 && c <= 57;

function two(buf: Buffer, i: number, name: string): number {
  const a = buf[i]!;
  const b = buf[i + 1]!;
  if (!isDigit(a) || !isDigit(b)) throw malformed(name, 'expected DateStyle ISO');
  return (a - 48) * 10 + (b - 48);
}

/** Is buf[start..end) the word infinity / -infinity? Returns that string, or undefined. */
function infinityText(buf: Buffer, start: number, end: number): string | undefined {
  if (buf[start] === 105 && end - start === 8) return 'infinity';
  if (buf[start] === 45 && buf[start + 1] === 105 && end - start === 9) return '-infinity';
  return undefined;
}

/**
 * 'YYYY-MM-DD HH:MM:SS[.ffffff][±HH[:MM[:SS]]][ BC]' without regexes or string slices: this runs once
 * per timestamp column per row.
 */
function decodeTimestampText(buf: Buffer, start: number, end: number, name: string): Date | string {
  const inf = infinityText(buf, start, end);
  if (inf !== undefined) return inf;
  let i = start;
  let year = 0;
  while (i < end && isDigit(buf[i])) year = year * 10 + buf[i++]! - 48;
  if (i === start || i + 15 > end || buf[i] !== 45 || buf[i + 3] !== 45 || buf[i + 6] !== 32 || buf[i + 9] !== 58 || buf[i + 12] !== 58) {
    throw malformed(name, 'expected DateStyle ISO');
  }
  const month = two(buf, i + 1, name);
  const day = two(buf, i + 4, name);
  const hour = two(buf, i + 7, name);
  const minute = two(buf, i + 10, name);
  const second = two(buf, i + 13, name);
  i += 15;
  let ms = 0;
  if (buf[i] === 46 && i < end) {
    i++;
    let n = 0;
    while (i < end && isDigit(buf[i])) {
      if (n < 3) ms = ms * 10 + buf[i]! - 48;
      n++;
      i++;
    }
    if (n === 1) ms *= 100;
    else if (n === 2) ms *= 10;
  }
  let offsetMs = 0;
  const sign = buf[i];
  if (i < end && (sign === 43 || sign === 45)) {
    let off = two(buf, i + 1, name) * 3_600_000;
    i += 3;
    if (i < end && buf[i] === 58) {
      off += two(buf, i + 1, name) * 60_000;
      i += 3;
      if (i < end && buf[i] === 58) {
        off += two(buf, i + 1, name) * 1000;
        i += 3;
      }
    }
    offsetMs = sign === 45 ? -off : off;
  }
  if (i < end) {
    if (end - i === 3 && buf[i] === 32 && buf[i + 1] === 66 && buf[i + 2] === 67) year = 1 - year;
    else throw malformed(name, 'expected DateStyle ISO');
  }
  const t = daysFromCivil(year, month, day) * MS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1000 + ms - offsetMs;
  if (t > MAX_DATE_MS || t < -MAX_DATE_MS) return buf.toString('latin1', start, end);
  return new Date(t);
}

/**
 * int8 microseconds since 2000-01-01 → Date, floored to ms. Split as hi·2^32 + lo so no intermediate
 * exceeds 2^53: hi·2^32 = hi·4294967·1000 + hi·296.
 */
function decodeTimestampBinary(buf: Buffer, start: number, end: number, withZone: boolean): Date | string {
  if (end - start !== 8) throw malformed(withZone ? 'timestamptz' : 'timestamp', 'expected 8 bytes');
  const hi = buf.readInt32BE(start);
  const lo = buf.readUInt32BE(start + 4);
  if (hi === 0x7fffffff && lo === 0xffffffff) return 'infinity';
  if (hi === -0x80000000 && lo === 0) return '-infinity';
  const t = hi * 4294967 + Math.floor((hi * 296 + lo) / 1000) + PG_EPOCH_MS;
  if (t > MAX_DATE_MS || t < -MAX_DATE_MS) return formatMicros(buf.readBigInt64BE(start), withZone);
  return new Date(t);
}

/** ISO text of an instant beyond the Date range (rare enough for BigInt). */
function formatMicros(us: bigint, withZone: boolean): string {
  const perDay = 86_400_000_000n;
  let days = us / perDay;
  let rest = us % perDay;
  if (rest < 0n) {
    rest += perDay;
    days -= 1n;
  }
  const [y, m, d] = civilFromDays(Number(days) + PG_EPOCH_DAYS);
  const t = Number(rest);
  const frac = t % 1_000_000;
  const secs = Math.floor(t / 1_000_000);
  const time =
    `${pad2(Math.floor(secs / 3600))}:${pad2(Math.floor(secs / 60) % 60)}:${pad2(secs % 60)}` +
    (frac === 0 ? '' : `.${String(frac).padStart(6, '0').replace(/0+$/, '')}`) +
    (withZone ? '+00' : '');
  return y > 0 ? `${pad4(y)}-${pad2(m)}-${pad2(d)} ${time}` : `${pad4(1 - y)}-${pad2(m)}-${pad2(d)} ${time} BC`;
}

function encodeTimestampText(value: unknown, name: string): string {
  if (value instanceof Date) return formatTimestamp(value, name);
  if (typeof value === 'string') return checkText(value, name);
  if (value === Infinity) return 'infinity';
  if (value === -Infinity) return '-infinity';
  throw cannotEncode(name, value);
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

function encodeTimestampBinary(value: unknown, name: string): Buffer {
  const out = Buffer.allocUnsafe(8);
  if (value === Infinity || value === 'infinity') out.writeBigInt64BE(INT64_MAX);
  else if (value === -Infinity || value === '-infinity') out.writeBigInt64BE(INT64_MIN);
  else if (value instanceof Date) {
    const ms = value.getTime();
    if (ms !== ms) throw cannotEncode(name, value, 'invalid Date');
    out.writeBigInt64BE(BigInt(ms - PG_EPOCH_MS) * 1000n);
  } else throw cannotEncode(name, value, 'binary format takes a Date or ±Infinity');
  return out;
}

export const timestamptz: PgCodec = {
  oid: Oid.timestamptz,
  name: 'timestamptz',
  arrayOid: ArrayOid.timestamptz,
  decodeText: (buf, start, end) => decodeTimestampText(buf, start, end, 'timestamptz'),
  decodeBinary: (buf, start, end) => decodeTimestampBinary(buf, start, end, true),
  encodeText: (v) => encodeTimestampText(v, 'timestamptz'),
  encodeBinary: (v) => encodeTimestampBinary(v, 'timestamptz'),
};

export const timestamp: PgCodec = {
  oid: Oid.timestamp,
  name: 'timestamp',
  arrayOid: ArrayOid.timestamp,
  decodeText: (buf, start, end) => decodeTimestampText(buf, start, end, 'timestamp'),
  decodeBinary: (buf, start, end) => decodeTimestampBinary(buf, start, end, false),
  // The '+00' offset is ignored by timestamp input, which leaves the UTC wall-clock time: what decode assumes.
  encodeText: (v) => encodeTimestampText(v, 'timestamp'),
  encodeBinary: (v) => encodeTimestampBinary(v, 'timestamp'),
};

/** 'YYYY-MM-DD[ BC]' → days since 1970-01-01, or undefined if it is not that shape. */
function parseDateString(s: string): number | undefined {
  const m = /^(\d{4,})-(\d\d)-(\d\d)( BC)?$/.exec(s);
  if (m === null) return undefined;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return undefined;
  return daysFromCivil(m[4] === undefined ? y : 1 - y, mo, d);
}

export const date: PgCodec = {
  oid: Oid.date,
  name: 'date',
  arrayOid: ArrayOid.date,
  // ISO output is already the chosen representation.
  decodeText: (buf, start, end) => buf.toString('latin1', start, end),
  decodeBinary: (buf, start, end) => {
    if (end - start !== 4) throw malformed('date', 'expected 4 bytes');
    const days = buf.readInt32BE(start);
    if (days === 0x7fffffff) return 'infinity';
    if (days === -0x80000000) return '-infinity';
    return formatDays(days + PG_EPOCH_DAYS);
  },
  encodeText: (v) => {
    if (v instanceof Date) {
      const ms = v.getTime();
      if (ms !== ms) throw cannotEncode('date', v, 'invalid Date');
      return formatDays(Math.floor(ms / MS_PER_DAY));
    }
    if (typeof v === 'string') return checkText(v, 'date');
    if (v === Infinity) return 'infinity';
    if (v === -Infinity) return '-infinity';
    throw cannotEncode('date', v);
  },
  encodeBinary: (v) => {
    const out = Buffer.allocUnsafe(4);
    let days: number | undefined;
    if (v === Infinity || v === 'infinity') days = 0x7fffffff;
    else if (v === -Infinity || v === '-infinity') days = -0x80000000;
    else if (v instanceof Date) {
      const ms = v.getTime();
      if (ms !== ms) throw cannotEncode('date', v, 'invalid Date');
      days = Math.floor(ms / MS_PER_DAY) - PG_EPOCH_DAYS;
    } else if (typeof v === 'string') {
      const d = parseDateString(v);
      if (d !== undefined) days = d - PG_EPOCH_DAYS;
    }
    if (days === undefined) throw cannotEncode('date', v, "binary format takes a Date, 'YYYY-MM-DD[ BC]' or ±Infinity");
    out.writeInt32BE(days);
    return out;
  },
};
