/**
 * Scalar codecs against the real server: every value is encoded by our codec (text and binary), sent
 * as a parameter, and the server's answer decoded by our codec (text and binary) must be the value;
 * an independent oracle (the server's own text, md5, epoch arithmetic) checks the meaning.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EncodeFailed } from '../../../src/data/errors.js';
import { Oid } from '../../../src/data/pg/types/index.js';
import { CodecServer } from './codecs-support.js';

const RUNS = { seed: 42, numRuns: 60 };

let s: CodecServer;

beforeAll(async () => {
  // A zone with a negative, half-hour, historically seconds-precise offset exercises the offset parser.
  s = await CodecServer.open('codecs', { TimeZone: 'America/St_Johns' });
});
afterAll(async () => {
  await s?.close();
});

/** Runs `roundTrips` and expects all four reads to equal `expected`. */
async function expectRoundTrips(type: string, oid: number, value: unknown, expected: unknown): Promise<void> {
  const got = await s.roundTrips(type, oid, value);
  for (const g of got) expect(g).toEqual(expected);
}

describe('integers', () => {
  it('int2 and int4 over their whole range', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -32768, max: 32767 }), fc.integer(), async (a, b) => {
        await expectRoundTrips('int2', Oid.int2, a, a);
        await expectRoundTrips('int4', Oid.int4, b, b);
        expect(await s.serverText('select $1::int4::text', [s.types.get(Oid.int4)!.encodeText(b)])).toEqual([String(b)]);
      }),
      RUNS,
    );
    for (const v of [-32768, 32767, 0]) await expectRoundTrips('int2', Oid.int2, v, v);
    for (const v of [-2147483648, 2147483647]) await expectRoundTrips('int4', Oid.int4, v, v);
  });

  it('int8 reads as bigint over the full range, and takes bigint, number or digit string', async () => {
    const min = -(2n ** 63n);
    const max = 2n ** 63n - 1n;
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min, max }), fc.maxSafeInteger(), async (big, num) => {
        await expectRoundTrips('int8', Oid.int8, big, big);
        await expectRoundTrips('int8', Oid.int8, num, BigInt(num));
        expect(await s.serverText('select $1::int8::text', [s.types.get(Oid.int8)!.encodeBinary!(big)])).toEqual([String(big)]);
      }),
      RUNS,
    );
    for (const v of [min, max, 0n, -1n]) await expectRoundTrips('int8', Oid.int8, v, v);
    await expectRoundTrips('int8', Oid.int8, '-9223372036854775808', min);
  });

  it('oid reads as a number up to 2^32-1', async () => {
    for (const v of [0, 1, 2147483648, 4294967295]) await expectRoundTrips('oid', Oid.oid, v, v);
  });

  it('refuses what the type cannot hold', () => {
    const int4 = s.types.get(Oid.int4)!;
    const int2 = s.types.get(Oid.int2)!;
    const int8 = s.types.get(Oid.int8)!;
    expect(() => int4.encodeText(1.5)).toThrow(EncodeFailed);
    expect(() => int4.encodeText(2147483648)).toThrow(EncodeFailed);
    expect(() => int4.encodeBinary!(NaN)).toThrow(EncodeFailed);
    expect(() => int2.encodeBinary!(40000)).toThrow(EncodeFailed);
    expect(() => int8.encodeText(2n ** 63n)).toThrow(EncodeFailed);
    expect(() => int8.encodeBinary!(0.5)).toThrow(EncodeFailed);
    expect(() => int8.encodeText({})).toThrow(EncodeFailed);
  });
});

describe('floats', () => {
  it('float8 keeps every double, NaN, ±Infinity and -0', async () => {
    await fc.assert(
      fc.asyncProperty(fc.double(), async (v) => {
        const got = await s.roundTrips('float8', Oid.float8, v);
        for (const g of got) expect(Object.is(g, v)).toBe(true);
      }),
      RUNS,
    );
    for (const v of [NaN, Infinity, -Infinity, -0, 0, Number.MIN_VALUE, Number.MAX_VALUE, 0.1]) {
      const got = await s.roundTrips('float8', Oid.float8, v);
      for (const g of got) expect(Object.is(g, v)).toBe(true);
    }
  });

  it('float4 reads as the shortest decimal the server prints, in text and binary alike', async () => {
    await fc.assert(
      fc.asyncProperty(fc.float(), async (v) => {
        const [text] = await s.serverText('select $1::float4::text', [s.types.get(Oid.float4)!.encodeText(v)]);
        const expected = Number(text);
        const got = await s.roundTrips('float4', Oid.float4, v);
        for (const g of got) expect(Object.is(g, expected)).toBe(true);
        expect(Object.is(Math.fround(expected), v)).toBe(true);
      }),
      RUNS,
    );
    expect(await s.value("select '0.1'::float4", [], 1)).toBe(0.1);
  });
});

describe('numeric', () => {
  const decimal = fc
    .tuple(fc.constantFrom('', '-', '+'), fc.stringMatching(/^\d{0,40}$/), fc.option(fc.stringMatching(/^\d{0,30}$/)), fc.option(fc.integer({ min: -20, max: 20 })))
    .filter(([, int, frac]) => int !== '' || (frac ?? '') !== '')
    .map(([sign, int, frac, exp]) => `${sign}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : `e${exp}`}`);

  it('reads as the string Postgres prints and writes binary the server reads as the same number', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(decimal, fc.constantFrom('NaN', 'Infinity', '-Infinity', '0', '-0.000', '1e-20', '99999999.99990000')), async (v) => {
        const [canonical] = await s.serverText('select $1::numeric::text', [v]);
        const [viaBinary] = await s.serverText('select $1::numeric::text', [s.types.get(Oid.numeric)!.encodeBinary!(v)]);
        expect(viaBinary).toBe(canonical);
        await expectRoundTrips('numeric', Oid.numeric, v, canonical);
      }),
      { ...RUNS, numRuns: 150 },
    );
  });

  it('takes numbers and bigints', async () => {
    await expectRoundTrips('numeric', Oid.numeric, 1.5, '1.5');
    await expectRoundTrips('numeric', Oid.numeric, 1e21, '1000000000000000000000');
    await expectRoundTrips('numeric', Oid.numeric, 123456789012345678901234567890n, '123456789012345678901234567890');
    await expectRoundTrips('numeric', Oid.numeric, -Infinity, '-Infinity');
    expect(() => s.types.get(Oid.numeric)!.encodeBinary!('12abc')).toThrow(EncodeFailed);
  });
});

describe('bool, text, bytea, uuid', () => {
  it('bool', async () => {
    for (const v of [true, false]) await expectRoundTrips('bool', Oid.bool, v, v);
    expect(() => s.types.get(Oid.bool)!.encodeText(1)).toThrow(EncodeFailed);
  });

  const awkward = fc.constantFrom('', ' ', '"', '\\', "'", ',', '{}', 'NULL', 'é', '😀', '\u2028', 'a\nb', '\\x41');
  const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 60 }), awkward).filter((t) => !t.includes('\0'));

  it('text and varchar hold any string without U+0000', async () => {
    await fc.assert(
      fc.asyncProperty(text, async (v) => {
        await expectRoundTrips('text', Oid.text, v, v);
        await expectRoundTrips('varchar', Oid.varchar, v, v);
        const md5 = createHash('md5').update(v, 'utf8').digest('hex');
        expect(await s.serverText('select md5($1::text)', [s.types.get(Oid.text)!.encodeText(v)])).toEqual([md5]);
      }),
      RUNS,
    );
    await expectRoundTrips('bpchar', Oid.bpchar, 'ab', 'ab');
    await expectRoundTrips('name', Oid.name, 'pg_class', 'pg_class');
    await expectRoundTrips('"char"', Oid.char, 'x', 'x');
  });

  it('refuses U+0000 and lone surrogates rather than altering them', () => {
    const t = s.types.get(Oid.text)!;
    expect(() => t.encodeText('a\0b')).toThrow(EncodeFailed);
    expect(() => t.encodeText('\ud800')).toThrow(EncodeFailed);
    expect(() => t.encodeBinary!('x\udc00')).toThrow(EncodeFailed);
    expect(() => s.types.encodeParam('a\0', 0)).toThrow(EncodeFailed);
  });

  it('bytea reads as a Buffer in both formats, and hex and escape text output alike', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        const v = Buffer.from(bytes);
        await expectRoundTrips('bytea', Oid.bytea, v, v);
        expect(await s.serverText("select encode($1::bytea, 'hex')", [v])).toEqual([v.toString('hex')]);
      }),
      RUNS,
    );
    await s.pg.query('set bytea_output = escape');
    try {
      const v = Buffer.from([0, 1, 92, 39, 34, 127, 128, 255, 65]);
      expect(await s.value('select $1::bytea', [v], 0)).toEqual(v);
    } finally {
      await s.pg.query('set bytea_output = hex');
    }
    expect(() => s.types.get(Oid.bytea)!.encodeText('abc')).toThrow(EncodeFailed);
  });

  it('uuid reads as a lowercase string', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uuid(), async (v) => {
        await expectRoundTrips('uuid', Oid.uuid, v, v);
        await expectRoundTrips('uuid', Oid.uuid, v.toUpperCase(), v);
      }),
      RUNS,
    );
    expect(() => s.types.get(Oid.uuid)!.encodeBinary!('not-a-uuid')).toThrow(EncodeFailed);
  });
});

describe('json and jsonb', () => {
  it('jsonb reads as the parsed document (key order is the server’s)', async () => {
    const doc = fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v).includes('\\u0000'));
    await fc.assert(
      fc.asyncProperty(doc, async (v) => {
        const expected = JSON.parse(JSON.stringify(v)) as unknown;
        // A string parameter is JSON text (see below), so a top-level JSON string is sent spelled out.
        const param = typeof v === 'string' ? JSON.stringify(v) : v;
        await expectRoundTrips('jsonb', Oid.jsonb, param, expected);
        await expectRoundTrips('json', Oid.json, param, expected);
      }),
      RUNS,
    );
  });

  it('a string parameter is JSON text; bigint, functions and Buffers are refused', async () => {
    await expectRoundTrips('jsonb', Oid.jsonb, '{"a": [1, "x"]}', { a: [1, 'x'] });
    const jsonb = s.types.get(Oid.jsonb)!;
    expect(() => jsonb.encodeText({ n: 1n })).toThrow(EncodeFailed);
    expect(() => jsonb.encodeText(() => 1)).toThrow(EncodeFailed);
    expect(() => jsonb.encodeText(Buffer.from('{}'))).toThrow(EncodeFailed);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => jsonb.encodeText(cyclic)).toThrow(EncodeFailed);
  });
});

describe('dates and timestamps', () => {
  // Postgres' earliest timestamp (4713-11-24 BC) to the latest instant a Date holds.
  const PG_MIN_MS = -210866803200000;
  const DATE_MAX_MS = 8.64e15;
  const instant = fc.bigInt({ min: BigInt(PG_MIN_MS), max: BigInt(DATE_MAX_MS) }).map(Number);

  /** The server's epoch, in ms, of a timestamp expression (µs dropped by floor, as the codec does). */
  async function epochMs(expr: string, param: string | Buffer): Promise<number> {
    const [t] = await s.serverText(`select floor(extract(epoch from ${expr}) * 1000)::int8::text`, [param]);
    return Number(t);
  }

  it('timestamptz reads as the same instant, from text (any offset) and binary', async () => {
    const codec = s.types.get(Oid.timestamptz)!;
    await fc.assert(
      fc.asyncProperty(instant, async (ms) => {
        const d = new Date(ms);
        await expectRoundTrips('timestamptz', Oid.timestamptz, d, d);
        expect(await epochMs('$1::timestamptz', codec.encodeText(d))).toBe(ms);
        expect(await epochMs('$1::timestamptz', codec.encodeBinary!(d))).toBe(ms);
      }),
      RUNS,
    );
  });

  it('timestamp (without time zone) is UTC wall-clock time', async () => {
    const codec = s.types.get(Oid.timestamp)!;
    await fc.assert(
      fc.asyncProperty(instant, async (ms) => {
        const d = new Date(ms);
        await expectRoundTrips('timestamp', Oid.timestamp, d, d);
        expect(await epochMs('$1::timestamp', codec.encodeText(d))).toBe(ms);
      }),
      RUNS,
    );
    expect(await s.value("select '2024-05-06 07:08:09.5'::timestamp", [], 0)).toEqual(new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 500)));
  });

  it('truncates microseconds (floor) identically in text and binary', async () => {
    for (const [lit, ms] of [
      ['2024-01-01 00:00:00.123999+00', Date.UTC(2024, 0, 1) + 123],
      ['1969-12-31 23:59:59.999999+00', -1],
      ['1900-01-01 00:00:00.000001+00', Date.UTC(1900, 0, 1)],
    ] as const) {
      for (const f of [0, 1] as const) expect(await s.value(`select '${lit}'::timestamptz`, [], f)).toEqual(new Date(ms));
    }
  });

  it('floors any microsecond instant to its millisecond, exactly, far from 2000 too', async () => {
    // Years 1 to 9999, where toISOString spells the literal independently of our code.
    const micros = fc.bigInt({ min: -62135596800000000n, max: 253402300799999999n });
    await fc.assert(
      fc.asyncProperty(micros, fc.constantFrom(999n, 0n, 1n, 500n), async (us, tail) => {
        const exact = us - (((us % 1000n) + 1000n) % 1000n) + tail;
        const ms = Number(exact >= 0n ? exact / 1000n : -((-exact + 999n) / 1000n));
        const literal = new Date(ms).toISOString().replace('T', ' ').replace('Z', `${String(tail).padStart(3, '0')}+00`);
        for (const type of ['timestamptz', 'timestamp']) {
          for (const f of [0, 1] as const) expect(await s.value(`select $1::${type}`, [literal], f)).toEqual(new Date(ms));
        }
      }),
      RUNS,
    );
  });

  it('reads historical offsets with seconds, and BC years', async () => {
    const amsterdam = await CodecServer.sharing(s, { TimeZone: 'Europe/Amsterdam' });
    try {
      const [text] = await amsterdam.serverText("select '1900-06-01 12:00:00+00'::timestamptz::text");
      expect(text).toBe('1900-06-01 12:19:32+00:19:32');
      for (const f of [0, 1] as const) {
        expect(await amsterdam.value("select '1900-06-01 12:00:00+00'::timestamptz", [], f)).toEqual(new Date(Date.UTC(1900, 5, 1, 12)));
        const bc = (await amsterdam.value("select '0044-03-15 12:00:00+00 BC'::timestamptz", [], f)) as Date;
        expect(bc.getUTCFullYear()).toBe(-43);
        expect(bc.toISOString()).toBe('-000043-03-15T12:00:00.000Z');
      }
    } finally {
      await amsterdam.close();
    }
  });

  it('±infinity read as strings and are written from strings or ±Infinity', async () => {
    for (const [type, oid] of [['timestamptz', Oid.timestamptz], ['timestamp', Oid.timestamp], ['date', Oid.date]] as const) {
      await expectRoundTrips(type, oid, Infinity, 'infinity');
      await expectRoundTrips(type, oid, -Infinity, '-infinity');
      await expectRoundTrips(type, oid, 'infinity', 'infinity');
    }
  });

  it('timestamps beyond the Date range read as ISO strings', async () => {
    expect(await s.value("select '294276-12-31 23:59:59.999999'::timestamp", [], 0)).toBe('294276-12-31 23:59:59.999999');
    expect(await s.value("select '294276-12-31 23:59:59.999999'::timestamp", [], 1)).toBe('294276-12-31 23:59:59.999999');
    expect(await s.value("select '294276-12-31 23:59:59.5+00'::timestamptz", [], 1)).toBe('294276-12-31 23:59:59.5+00');
  });

  it('refuses invalid Dates and other values', () => {
    for (const oid of [Oid.timestamptz, Oid.timestamp, Oid.date]) {
      const codec = s.types.get(oid)!;
      expect(() => codec.encodeText(new Date(NaN))).toThrow(EncodeFailed);
      expect(() => codec.encodeBinary!(new Date(NaN))).toThrow(EncodeFailed);
      expect(() => codec.encodeText(12)).toThrow(EncodeFailed);
    }
    expect(() => s.types.encodeParam(new Date(NaN), 0)).toThrow(EncodeFailed);
  });

  it("date reads as 'YYYY-MM-DD' (BC suffixed) in text and binary, and takes Dates and strings", async () => {
    const codec = s.types.get(Oid.date)!;
    // Postgres' earliest date (4713-11-24 BC) to the last day a Date holds, as days since 1970-01-01.
    const days = fc.integer({ min: -2440588, max: 100_000_000 });
    await fc.assert(
      fc.asyncProperty(days, async (n) => {
        const d = new Date(n * 86_400_000);
        const y = d.getUTCFullYear();
        const expected =
          `${String(y > 0 ? y : 1 - y).padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}` +
          (y > 0 ? '' : ' BC');
        expect(await s.serverText("select ($1::date - '1970-01-01'::date)::text", [codec.encodeText(d)])).toEqual([String(n)]);
        expect(await s.serverText("select ($1::date - '1970-01-01'::date)::text", [codec.encodeBinary!(expected)])).toEqual([String(n)]);
        for (const f of [0, 1] as const) expect(await s.value("select '1970-01-01'::date + $1::int4", [String(n)], f)).toBe(expected);
        await expectRoundTrips('date', Oid.date, d, expected);
        await expectRoundTrips('date', Oid.date, expected, expected);
      }),
      RUNS,
    );
  });
});

describe('decoders', () => {
  it('are cached per OID and format; unknown types read as strings (text) or private Buffers (binary)', async () => {
    expect(s.types.decoder(Oid.int4, 0)).toBe(s.types.decoder(Oid.int4, 0));
    expect(s.types.decoder(Oid.int4, 1)).not.toBe(s.types.decoder(Oid.int4, 0));
    // point has no codec at all; interval is read as its text, and so are its arrays.
    expect(await s.value("select '(1,2)'::point", [], 0)).toBe('(1,2)');
    const raw = (await s.value("select '(1,2)'::point", [], 1)) as Buffer;
    expect(raw).toEqual(Buffer.from([0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0]));
    expect(await s.value("select '1 day'::interval", [], 0)).toBe('1 day');
    expect(await s.value("select array['1 day', null, '02:00']::interval[]", [], 0)).toEqual(['1 day', null, '02:00:00']);
    expect(await s.value("select array['10.0.0.1/8']::inet[]", [], 0)).toEqual(['10.0.0.1/8']);
    expect(s.types.hasBinary(1186)).toBe(false);
    expect(s.types.hasBinary(Oid.int4)).toBe(true);
    const r = await s.pg.query("select 'abc'::bytea", [], 1);
    const cell = r.rows[0]![0]!;
    const decoded = s.types.decoder(Oid.bytea, 1)(cell.buf, cell.start, cell.end) as Buffer;
    cell.buf.fill(0, cell.start, cell.end);
    expect(decoded.toString()).toBe('abc');
  });
});
