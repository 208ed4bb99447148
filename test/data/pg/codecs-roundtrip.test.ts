/**
 * Codecs through OUR client: each statement runs three times, so the first goes the unnamed way
 * (parameters typed by the server, encoded by JS value, text results) and the later ones through the
 * prepared-statement cache (parameter OIDs known, binary results where the type has a binary codec).
 * Every run must read back the same value.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPostgres } from '../../../src/data/pg/index.js';
import { PgTypes } from '../../../src/data/pg/types/index.js';
import type { DriverConnection } from '../../../src/data/driver.js';
import type { Value } from '../../../src/data/values.js';
import { type FreshDatabase, freshDatabase } from '../../support/pg.js';
import { testSystem } from '../../support/systems.js';

const RUNS = { seed: 42, numRuns: 25 };

let db: FreshDatabase;

beforeAll(() => {
  db = freshDatabase('codecs_rt');
});
afterAll(() => {
  db?.drop();
});

/** A connection for one test, closed (and its system shut down) whatever happens. */
async function withConnection(fn: (conn: DriverConnection) => Promise<void>, types?: PgTypes): Promise<void> {
  const system = testSystem();
  const conn = (await connectPostgres(system, {
    host: db.host,
    port: db.port,
    user: db.user,
    database: db.database,
    params: { TimeZone: 'America/St_Johns' },
    ...(types === undefined ? {} : { types }),
  })) as DriverConnection;
  try {
    await fn(conn);
  } finally {
    await conn.close();
    system.shutdown();
  }
}

/** Runs `select $1::type as v` three times; every run must give `expected`. */
async function expectSame(conn: DriverConnection, type: string, value: unknown, expected: unknown): Promise<void> {
  for (let run = 0; run < 3; run++) {
    const r = await conn.query(`select $1::${type} as v`, [value as Value], undefined);
    const got = r.rows[0]!.v;
    if (typeof expected === 'number') expect(Object.is(got, expected), `${type} run ${run}: ${String(got)}`).toBe(true);
    else expect(got, `${type} run ${run}`).toEqual(expected);
  }
}

describe('codecs through connectPostgres', () => {
  it('scalars read the same on the unnamed (text) and prepared (binary) paths', async () => {
    await withConnection(async (conn) => {
      const cases: [string, unknown, unknown][] = [
        ['int2', 7, 7],
        ['int4', -2147483648, -2147483648],
        ['int8', 9223372036854775807n, 9223372036854775807n],
        ['int8', 42, 42n],
        ['float4', 0.1, 0.1],
        ['float8', -0, -0],
        ['float8', NaN, NaN],
        ['float8', -Infinity, -Infinity],
        ['numeric', '-123.4500', '-123.4500'],
        ['numeric', 'NaN', 'NaN'],
        ['bool', false, false],
        ['text', 'a"b\\c,{NULL}', 'a"b\\c,{NULL}'],
        ['varchar', 'é😀', 'é😀'],
        ['bytea', Buffer.from([0, 1, 255]), Buffer.from([0, 1, 255])],
        ['uuid', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
        ['jsonb', { b: [1, 'x', null], a: { c: true } }, { a: { c: true }, b: [1, 'x', null] }],
        ['json', { a: 1 }, { a: 1 }],
        ['date', '2024-02-29', '2024-02-29'],
        ['date', '0044-03-15 BC', '0044-03-15 BC'],
        ['date', new Date(Date.UTC(2020, 0, 2, 23)), '2020-01-02'],
        ['timestamptz', new Date(Date.UTC(1900, 5, 1, 12, 0, 0, 123)), new Date(Date.UTC(1900, 5, 1, 12, 0, 0, 123))],
        ['timestamp', new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 500)), new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 500))],
        ['timestamptz', 'infinity', 'infinity'],
        ['oid', 4294967295, 4294967295],
        ['int4[]', [[1, null], [3, 4]], [[1, null], [3, 4]]],
        ['text[]', ['NULL', null, '"', '\\', '', ' x '], ['NULL', null, '"', '\\', '', ' x ']],
        ['int8[]', [1n, null, -1n], [1n, null, -1n]],
        ['bytea[]', [Buffer.from('a"\\'), null], [Buffer.from('a"\\'), null]],
        ['timestamptz[]', [new Date(0), null], [new Date(0), null]],
        ['date[]', ['2024-01-01', null], ['2024-01-01', null]],
        ['numeric[]', ['1.50', 'NaN'], ['1.50', 'NaN']],
      ];
      for (const [type, value, expected] of cases) await expectSame(conn, type, value, expected);
      // Microseconds are floored to the millisecond on both paths.
      for (let run = 0; run < 3; run++) {
        const r = await conn.query("select '1969-12-31 23:59:59.999999+00'::timestamptz as v where $1::int4 = 1", [1], undefined);
        expect(r.rows[0]!.v).toEqual(new Date(-1));
      }
    });
  });

  it('random values of each type round-trip on both paths', async () => {
    await withConnection(async (conn) => {
      const text = fc.string({ unit: 'grapheme', maxLength: 30 }).filter((t) => !t.includes('\0'));
      await fc.assert(
        fc.asyncProperty(
          fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
          fc.double(),
          text,
          fc.integer({ min: -210866803200, max: 8.64e12 }).map((sec) => new Date(sec * 1000 + 7)),
          fc.array(fc.option(text), { maxLength: 5 }),
          async (big, dbl, str, when, strs) => {
            await expectSame(conn, 'int8', big, big);
            await expectSame(conn, 'float8', dbl, dbl);
            await expectSame(conn, 'text', str, str);
            await expectSame(conn, 'timestamptz', when, when);
            await expectSame(conn, 'text[]', strs, strs);
          },
        ),
        RUNS,
      );
    });
  });

  it('a table of every type reads back what was written, on both paths', async () => {
    await withConnection(async (conn) => {
      await conn.query(
        'create table everything (id int4 primary key, i2 int2, i8 int8, f4 float4, f8 float8, n numeric, b bool, t text, by bytea, u uuid, j jsonb, d date, ts timestamp, tz timestamptz, arr int4[], tarr text[])',
        [],
        undefined,
      );
      const row = {
        i2: -5,
        i8: -(2n ** 63n),
        f4: 1.5,
        f8: 1e-300,
        n: '3.14159265358979323846264338327950288419716939937510',
        b: true,
        t: 'tab\there',
        by: Buffer.alloc(100, 7),
        u: '00000000-0000-0000-0000-000000000001',
        j: { nested: { arr: [1, 2, { x: 'y' }] } },
        d: '5874897-12-31',
        ts: new Date(-62135596800000),
        tz: new Date(8.64e15),
        arr: [[1, 2], [3, null]],
        tarr: ['}', '{', ','],
      };
      const cols = Object.keys(row);
      await conn.query(
        `insert into everything (id, ${cols.join(', ')}) values (1, ${cols.map((_, k) => `$${k + 1}`).join(', ')})`,
        Object.values(row) as Value[],
        undefined,
      );
      for (let run = 0; run < 3; run++) {
        const r = await conn.query('select * from everything where id = $1', [1], undefined);
        expect(r.rows[0], `run ${run}`).toEqual({ id: 1, ...row });
      }
    });
  });

  it('custom types registered by name are resolved at connect', async () => {
    await withConnection(async (conn) => {
      await conn.query("create type mood as enum ('sad', 'ok', 'happy')", [], undefined);
    });
    const types = new PgTypes();
    types.register({ name: 'mood', decode: (t) => t.toUpperCase(), encode: (v) => String(v).toLowerCase() });
    await withConnection(async (conn) => {
      expect(types.pendingNames()).toEqual([]);
      // The unnamed first run has no OIDs, so values are spelled by JS value there; the custom encoder
      // runs once the OIDs are known. Lowercase values read the same either way.
      for (let run = 0; run < 3; run++) {
        const r = await conn.query('select $1::mood as m, $2::mood[] as ms', ['happy', ['sad', null]], undefined);
        expect(r.rows[0]).toEqual({ m: 'HAPPY', ms: ['SAD', null] });
      }
    }, types);
  });
});
