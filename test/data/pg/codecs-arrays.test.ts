/**
 * Arrays, parameters encoded by JS value (oid 0), custom types and hostile bytes, against the real
 * server (the hostile-bytes part needs none).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbError, EncodeFailed, ProtocolError } from '../../../src/data/errors.js';
import { ArrayOid, citext, hstore, Oid, PgTypes } from '../../../src/data/pg/types/index.js';
import { CodecServer } from './codecs-support.js';

const RUNS = { seed: 42, numRuns: 40 };

let s: CodecServer;

beforeAll(async () => {
  s = await CodecServer.open('codecs_arrays', { TimeZone: 'Asia/Kolkata' });
});
afterAll(async () => {
  await s?.close();
});

async function expectRoundTrips(type: string, oid: number, value: unknown, expected: unknown): Promise<void> {
  const got = await s.roundTrips(type, oid, value);
  for (const g of got) expect(g).toEqual(expected);
}

/** Strings that are syntax in array literals, or look like NULL. */
const awkward = fc.constantFrom('', ' ', ' a ', '"', '\\', '\\\\"', ',', '{', '}', '{1,2}', 'NULL', 'null', 'a,b', '\t', 'é', '😀', "'");
const textElement = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), awkward).filter((t) => !t.includes('\0'));

/** 1-, 2- or 3-dimensional rectangular arrays of `element` or null. */
function nested<T>(element: fc.Arbitrary<T>): fc.Arbitrary<unknown[]> {
  const cell = fc.option(element, { freq: 5 });
  return fc.oneof(
    fc.array(cell, { maxLength: 6 }),
    fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 })).chain(([a, b]) => fc.array(fc.array(cell, { minLength: b, maxLength: b }), { minLength: a, maxLength: a })),
    fc
      .tuple(fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 2 }))
      .chain(([a, b, c]) => fc.array(fc.array(fc.array(cell, { minLength: c, maxLength: c }), { minLength: b, maxLength: b }), { minLength: a, maxLength: a })),
  );
}

const mapNested = (v: unknown, f: (x: unknown) => unknown): unknown => (Array.isArray(v) ? v.map((x) => mapNested(x, f)) : v === null ? null : f(v));

describe('arrays', () => {
  it('text[] with awkward strings and NULLs, 1 to 3 dimensions, text and binary both ways', async () => {
    await fc.assert(
      fc.asyncProperty(nested(textElement), async (v) => {
        await expectRoundTrips('text[]', ArrayOid.text, v, v);
        // The server's own reading of our literal, independent of our decoder.
        const [json] = await s.serverText('select array_to_json($1::text[])::text', [s.types.get(ArrayOid.text)!.encodeText(v)]);
        expect(JSON.parse(json!)).toEqual(v);
      }),
      RUNS,
    );
    await expectRoundTrips('text[]', ArrayOid.text, [], []);
    await expectRoundTrips('text[]', ArrayOid.text, [[], []], []);
    expect(() => s.types.get(ArrayOid.text)!.encodeBinary!([[], ['a']])).toThrow(EncodeFailed);
  });

  it('arrays of numbers, bigints, floats, bools, numerics', async () => {
    await fc.assert(
      fc.asyncProperty(
        nested(fc.integer()),
        nested(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
        nested(fc.double({ noNaN: true })),
        nested(fc.boolean()),
        nested(fc.stringMatching(/^-?[1-9]\d{0,20}\.\d{1,10}$/)),
        async (ints, bigs, doubles, bools, numerics) => {
          await expectRoundTrips('int4[]', ArrayOid.int4, ints, ints);
          await expectRoundTrips('int8[]', ArrayOid.int8, bigs, bigs);
          const got = await s.roundTrips('float8[]', ArrayOid.float8, doubles);
          for (const g of got) expect(g).toEqual(doubles);
          await expectRoundTrips('bool[]', ArrayOid.bool, bools, bools);
          await expectRoundTrips('numeric[]', ArrayOid.numeric, numerics, numerics);
        },
      ),
      RUNS,
    );
    const specials = [NaN, Infinity, -Infinity, -0];
    const got = await s.roundTrips('float8[]', ArrayOid.float8, specials);
    for (const g of got) (g as number[]).forEach((x, k) => expect(Object.is(x, specials[k])).toBe(true));
  });

  it('arrays of bytea, uuid, jsonb, timestamptz, date', async () => {
    await fc.assert(
      fc.asyncProperty(
        nested(fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b))),
        nested(fc.uuid()),
        // A JS array is always an array dimension, so JSON arrays are left out of jsonb[] (pass them as JSON text).
        nested(fc.jsonValue({ maxDepth: 2 }).filter((j) => typeof j !== 'string' && !Array.isArray(j) && !JSON.stringify(j).includes('\\u0000'))),
        nested(fc.integer({ min: -210866803200, max: 8.64e12 }).map((sec) => new Date(sec * 1000))),
        nested(fc.integer({ min: -700000, max: 700000 }).map((d) => new Date(d * 86_400_000))),
        async (bytes, uuids, docs, instants, days) => {
          await expectRoundTrips('bytea[]', ArrayOid.bytea, bytes, bytes);
          await expectRoundTrips('uuid[]', ArrayOid.uuid, uuids, uuids);
          await expectRoundTrips('jsonb[]', ArrayOid.jsonb, docs, mapNested(docs, (j) => JSON.parse(JSON.stringify(j))));
          await expectRoundTrips('timestamptz[]', ArrayOid.timestamptz, instants, instants);
          const asText = mapNested(days, (d) => {
            const text = s.types.get(Oid.date)!.encodeText(d);
            return text;
          });
          await expectRoundTrips('date[]', ArrayOid.date, days, asText);
        },
      ),
      { ...RUNS, numRuns: 25 },
    );
  });

  it('reads non-default lower bounds and refuses ragged arrays', async () => {
    for (const f of [0, 1] as const) expect(await s.value("select '[0:2]={1,2,3}'::int4[]", [], f)).toEqual([1, 2, 3]);
    for (const f of [0, 1] as const) expect(await s.value("select '[2:3][1:1]={{a},{b}}'::text[]", [], f)).toEqual([['a'], ['b']]);
    expect(() => s.types.get(ArrayOid.int4)!.encodeBinary!([[1, 2], [3]])).toThrow(EncodeFailed);
    expect(() => s.types.get(ArrayOid.int4)!.encodeBinary!([[1, 2], 3])).toThrow(EncodeFailed);
    expect(() => s.types.get(ArrayOid.int4)!.encodeText([[[[[[[1]]]]]]])).toThrow(EncodeFailed);
    expect(() => s.types.get(ArrayOid.int4)!.encodeText(5)).toThrow(EncodeFailed);
  });
});

describe('parameters by JS value (oid 0) and by type', () => {
  /** `value` sent with oid 0 and with the column's OID must both come back as `expected`. */
  async function expectInferred(type: string, oid: number, value: unknown, expected: unknown): Promise<void> {
    for (const paramOid of [0, oid]) {
      const p = s.types.encodeParam(value, paramOid);
      for (const f of [0, 1] as const) expect(await s.value(`select $1::${type}`, [p], f)).toEqual(expected);
    }
  }

  it('spells each JS value as Postgres reads it', async () => {
    await expectInferred('int4', Oid.int4, 42, 42);
    await expectInferred('int8', Oid.int8, 2n ** 62n, 2n ** 62n);
    await expectInferred('int8', Oid.int8, -12, -12n);
    await expectInferred('text', Oid.text, 42, '42');
    await expectInferred('bool', Oid.bool, true, true);
    await expectInferred('numeric', Oid.numeric, 2n ** 70n, String(2n ** 70n));
    await expectInferred('timestamptz', Oid.timestamptz, new Date(Date.UTC(-100, 1, 2, 3, 4, 5, 6)), new Date(Date.UTC(-100, 1, 2, 3, 4, 5, 6)));
    await expectInferred('timestamp', Oid.timestamp, new Date(Date.UTC(2024, 1, 2, 3, 4, 5, 6)), new Date(Date.UTC(2024, 1, 2, 3, 4, 5, 6)));
    await expectInferred('date', Oid.date, new Date(Date.UTC(2024, 1, 29, 23, 59)), '2024-02-29');
    await expectInferred('bytea', Oid.bytea, Buffer.from([0, 255, 10]), Buffer.from([0, 255, 10]));
    await expectInferred('text', Oid.text, Buffer.from('héllo'), 'héllo');
    await expectInferred('jsonb', Oid.jsonb, { a: [1, null, 'x'], b: { c: true } }, { a: [1, null, 'x'], b: { c: true } });
    await expectInferred('int4[]', ArrayOid.int4, [[1, null], [3, 4]], [[1, null], [3, 4]]);
    await expectInferred('text[]', ArrayOid.text, ['NULL', null, '"', '\\', ''], ['NULL', null, '"', '\\', '']);
    await expectInferred('bytea[]', ArrayOid.bytea, [Buffer.from('a"\\'), null], [Buffer.from('a"\\'), null]);
    await expectInferred('jsonb[]', ArrayOid.jsonb, [{ q: 'a"b\\' }, null], [{ q: 'a"b\\' }, null]);
    await expectInferred('timestamptz[]', ArrayOid.timestamptz, [new Date(0), null], [new Date(0), null]);
    expect(s.types.encodeParam(null, 0)).toBeNull();
    expect(s.types.encodeParam(undefined, Oid.int4)).toBeNull();
  });

  it('spells numbers the way Postgres reads them, specials included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.double(), async (v) => {
        for (const f of [0, 1] as const) expect(Object.is(await s.value('select $1::float8', [s.types.encodeParam(v, 0)], f), v)).toBe(true);
      }),
      RUNS,
    );
  });

  it('the unnamed path (oid 0) and the prepared path (OID known) send the same thing', async () => {
    const cases: [string, number, fc.Arbitrary<unknown>][] = [
      ['text', Oid.text, textElement],
      ['int8', Oid.int8, fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })],
      ['float8', Oid.float8, fc.double({ noNaN: true })],
      ['timestamptz', Oid.timestamptz, fc.integer({ min: -210866803200, max: 8.64e12 }).map((sec) => new Date(sec * 1000))],
      ['text[]', ArrayOid.text, nested(textElement)],
      ['jsonb', Oid.jsonb, fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })).filter((j) => !JSON.stringify(j).includes('\\u0000'))],
    ];
    for (const [type, oid, arb] of cases) {
      await fc.assert(
        fc.asyncProperty(arb, async (v) => {
          const [a] = await s.serverText(`select $1::${type}::text`, [s.types.encodeParam(v, 0)]);
          const [b] = await s.serverText(`select $1::${type}::text`, [s.types.encodeParam(v, oid)], [oid]);
          expect(b).toBe(a);
        }),
        { ...RUNS, numRuns: 20 },
      );
    }
  });

  it('refuses what no type can hold', () => {
    expect(() => s.types.encodeParam(Symbol('x'), 0)).toThrow(EncodeFailed);
    expect(() => s.types.encodeParam(() => 1, 0)).toThrow(EncodeFailed);
    expect(() => s.types.encodeParam({ n: 1n }, 0)).toThrow(EncodeFailed);
    expect(() => s.types.encodeParam(new Map([['a', 1]]), 0)).toThrow(EncodeFailed);
    expect(() => s.types.encodeParam(new Set([1]), Oid.jsonb)).toThrow(EncodeFailed);
    expect(() => s.types.encodeParam(['a\0'], 0)).toThrow(EncodeFailed);
    expect(() => s.types.encodeParam([new Date(NaN)], 0)).toThrow(EncodeFailed);
    expect(() => s.types.encodeParam('x', Oid.int4)).not.toThrow();
    expect(() => s.types.encodeParam(1.5, Oid.int4)).toThrow(EncodeFailed);
  });
});

describe('custom types', () => {
  it('enums, extension types and their arrays decode through registered text codecs, bound by name', async () => {
    await s.pg.query("create type mood as enum ('sad', 'ok', 'happy')");
    await s.pg.query('create extension if not exists citext');
    await s.pg.query('create domain posint as int4 check (value > 0)');
    const types = new PgTypes();
    types.register({ name: 'mood', decode: (t) => ({ mood: t }), encode: (v) => (v as { mood: string }).mood });
    types.register({ name: 'citext', decode: (t) => t.toLowerCase(), encode: (v) => String(v) });
    expect([...types.pendingNames()].sort()).toEqual(['citext', 'mood']);
    const found = await s.pg.query("select typname, oid::text, typarray::text from pg_type where typname in ('mood', 'citext')");
    for (const row of found.rows) {
      const [name, oid, arrayOid] = row.map((c) => c!.buf.toString('utf8', c!.start, c!.end));
      types.bindOid(name!, Number(oid), Number(arrayOid));
    }
    expect(types.pendingNames()).toEqual([]);
    const moodOid = Number((await s.serverText("select 'mood'::regtype::oid::text"))[0]);
    expect(types.hasBinary(moodOid)).toBe(false);

    const r = await s.pg.query("select 'happy'::mood, array['sad', null, 'ok']::mood[], 'HeLLo'::citext, array['A b', '\"Q\"']::citext[], 5::posint", [], 0);
    const decoded = r.fields.map((f, k) => {
      const c = r.rows[0]![k]!;
      return types.decoder(f.oid, 0)(c.buf, c.start, c.end);
    });
    expect(decoded).toEqual([{ mood: 'happy' }, [{ mood: 'sad' }, null, { mood: 'ok' }], 'hello', ['a b', '"q"'], 5]);
    // Domains are reported with their base type's OID: no registration needed.
    expect(r.fields[4]!.oid).toBe(Oid.int4);

    const p = types.encodeParam({ mood: 'ok' }, moodOid);
    expect(await s.serverText('select $1::mood::text', [p])).toEqual(['ok']);
    const arr = types.encodeParam([{ mood: 'sad' }, null], types.get(moodOid)!.arrayOid!);
    expect(await s.serverText('select $1::mood[]::text', [arr])).toEqual(['{sad,NULL}']);
    expect(() => types.encodeParam({ mood: 'a\0' }, moodOid)).toThrow(EncodeFailed);
  });
});

describe('custom type failures', () => {
  it("an application codec's exceptions become ProtocolError (decode) and EncodeFailed (encode)", () => {
    const types = new PgTypes();
    types.register({
      name: 'fragile',
      decode: () => {
        throw new Error('boom');
      },
      // Returns a non-string for 1, a string with U+0000 for 2, and throws for anything else.
      encode: (v) => {
        if (v === 1) return 42 as unknown as string;
        if (v === 2) return 'a\0';
        throw new Error('boom');
      },
    });
    types.bindOid('fragile', 4_000_000_000, 4_000_000_001);
    expect(types.get(4_000_000_001)?.name).toBe('fragile[]');
    expect(() => types.decoder(4_000_000_000, 0)(Buffer.from('xx'), 0, 2)).toThrow(ProtocolError);
    expect(() => types.decoder(4_000_000_001, 0)(Buffer.from('{a}'), 0, 3)).toThrow(ProtocolError);
    for (const v of [1, 2, 3]) expect(() => types.encodeParam(v, 4_000_000_000)).toThrow(EncodeFailed);
  });
});

describe('ready-made extension types', () => {
  it('hstore and citext', async () => {
    await s.pg.query('create extension if not exists hstore');
    await s.pg.query('create extension if not exists citext');
    const types = new PgTypes();
    types.register(hstore);
    types.register(citext);
    const found = await s.pg.query("select typname, oid::text, typarray::text from pg_type where typname in ('hstore', 'citext')");
    for (const row of found.rows) {
      const [name, oid, arrayOid] = row.map((c) => c!.buf.toString('utf8', c!.start, c!.end));
      types.bindOid(name!, Number(oid), Number(arrayOid));
    }
    const hstoreOid = Number((await s.serverText("select 'hstore'::regtype::oid::text"))[0]);
    const key = fc.string({ unit: 'grapheme', maxLength: 10 }).filter((t) => !t.includes('\0'));
    await fc.assert(
      fc.asyncProperty(fc.dictionary(key, fc.option(key), { maxKeys: 5 }), async (map) => {
        const p = types.encodeParam(map, hstoreOid);
        const r = await s.pg.query('select $1::hstore, hstore_to_json($1::hstore)::text', [p]);
        const [h, j] = r.rows[0]!;
        expect(types.decoder(hstoreOid, 0)(h!.buf, h!.start, h!.end)).toEqual({ ...map });
        expect(JSON.parse(j!.buf.toString('utf8', j!.start, j!.end))).toEqual({ ...map });
      }),
      RUNS,
    );
    const citextOid = Number((await s.serverText("select 'citext'::regtype::oid::text"))[0]);
    const r = await s.pg.query("select $1::citext = 'ABC'::citext", [types.encodeParam('abc', citextOid)]);
    expect(r.rows[0]![0]!.buf.toString('utf8', r.rows[0]![0]!.start, r.rows[0]![0]!.end)).toBe('t');
    expect(() => types.encodeParam({ a: 1 }, hstoreOid)).toThrow(EncodeFailed);
  });
});

describe('hostile bytes', () => {
  const types = new PgTypes();
  const oids = [...Object.values(Oid), ...Object.values(ArrayOid)];

  it('every decoder returns a value or throws ProtocolError, for any bytes at any offset', () => {
    fc.assert(
      fc.property(fc.constantFrom(...oids), fc.constantFrom(0 as const, 1 as const), fc.uint8Array({ maxLength: 64 }), fc.nat(8), (oid, format, bytes, pad) => {
        const buf = Buffer.concat([Buffer.alloc(pad, 0x7b), Buffer.from(bytes), Buffer.alloc(pad, 0x22)]);
        try {
          types.decoder(oid, format)(buf, pad, pad + bytes.length);
        } catch (e) {
          expect(e).toBeInstanceOf(ProtocolError);
        }
      }),
      { seed: 42, numRuns: 3000 },
    );
  });

  it('malformed array, timestamp and numeric bytes are ProtocolErrors', () => {
    const bad: [number, 0 | 1, Buffer][] = [
      [ArrayOid.int4, 0, Buffer.from('{1,2')],
      [ArrayOid.text, 0, Buffer.from('{"abc}')],
      [ArrayOid.text, 0, Buffer.from('{{{{{{{a}}}}}}}')],
      [ArrayOid.int4, 1, Buffer.from([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 23, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1])],
      [Oid.timestamptz, 0, Buffer.from('Tue Jan 02 2024')],
      [Oid.timestamptz, 1, Buffer.from([1, 2, 3])],
      [Oid.numeric, 1, Buffer.from([0, 5, 0, 0, 0, 0, 0, 0])],
      [Oid.jsonb, 1, Buffer.from([2, 0x7b, 0x7d])],
      [Oid.int4, 0, Buffer.from('12a')],
    ];
    for (const [oid, format, buf] of bad) {
      const err = (() => {
        try {
          types.decoder(oid, format)(buf, 0, buf.length);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err, `${oid}/${format}`).toBeInstanceOf(ProtocolError);
      expect((err as DbError).code).toBe('DB_PROTOCOL_ERROR');
    }
  });
});
