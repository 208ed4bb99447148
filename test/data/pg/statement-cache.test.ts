/**
 * The prepared-statement cache through the real server: prepared on second use, binary results
 * once described, LRU eviction closing statements (seen in pg_prepared_statements), failures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbError } from '../../../src/data/errors.js';
import { PgTypes, type PgConnection } from '../../../src/data/pg/index.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { rejection, withConnection } from './pg-support.js';

let db: FreshDatabase;
beforeAll(() => {
  db = freshDatabase('pgcache');
});
afterAll(() => db.drop());

/** The connection's own named statements, as the server lists them. */
async function prepared(conn: PgConnection): Promise<Record<string, string>> {
  const r = await conn.query<{ name: string; statement: string }>("select name, statement from pg_prepared_statements where name like 'molo_s%' order by name");
  return Object.fromEntries(r.rows.map((row) => [row.name, row.statement]));
}

describe('statement cache', () => {
  it('prepare: false runs a one-off statement, with fresh parameter types after a column type changed', async () => {
    await withConnection(db, async (conn) => {
      await conn.query('create table widen_me (id int4 primary key, n int4)');
      const insert = 'insert into widen_me (id, n) values ($1, $2)';
      await conn.query(insert, [1, 1]);
      await conn.query(insert, [2, 2]);
      expect(await prepared(conn)).toEqual({ molo_s1: insert });
      await conn.query('alter table widen_me alter column n type int8');
      const big = 2n ** 40n;
      // The cached statement still has int4 parameters and refuses the value itself.
      await expect(conn.query(insert, [3, big])).rejects.toBeInstanceOf(DbError);
      const oneOff = await conn.query(insert, [3, big], undefined, { prepare: false });
      expect(oneOff.affected).toBe(1);
      // The refusal dropped the stale statement: the next use prepares it afresh, with int8 parameters.
      expect(await prepared(conn)).toEqual({});
      expect((await conn.query(insert, [4, big])).affected).toBe(1);
      expect((await conn.query(insert, [5, big])).affected).toBe(1);
      expect(Object.values(await prepared(conn))).toEqual([insert]);
      expect((await conn.query<{ n: bigint }>('select n from widen_me where id >= 3 order by id')).rows).toEqual([{ n: big }, { n: big }, { n: big }]);
    });
  });

  it('prepares a SQL text on its second use and evicts the least recently used, closing it on the server', async () => {
    await withConnection(
      db,
      async (conn) => {
        const a = 'select $1::int4 as a';
        const b = 'select $1::int4 as b';
        const c = 'select $1::int4 as c';
        const d = 'select $1::int4 as d';
        await conn.query(a, [1]);
        expect(await prepared(conn)).toEqual({});
        await conn.query(a, [2]);
        expect(await prepared(conn)).toEqual({ molo_s1: a });
        for (const sql of [b, b, c, c]) await conn.query(sql, [3]);
        expect(await prepared(conn)).toEqual({ molo_s1: a, molo_s2: b, molo_s3: c });
        // A new text pushes out `a`, the least recently used: Close is written before d's own messages.
        await conn.query(d, [4]);
        expect(await prepared(conn)).toEqual({ molo_s2: b, molo_s3: c });
        await conn.query(d, [5]);
        expect(await prepared(conn)).toEqual({ molo_s2: b, molo_s3: c, molo_s4: d });
        // `a` again is a first use, then prepared under a new name (evicting b).
        expect((await conn.query(a, [6])).rows).toEqual([{ a: 6 }]);
        expect((await conn.query(a, [7])).rows).toEqual([{ a: 7 }]);
        expect(Object.keys(await prepared(conn)).sort()).toEqual(['molo_s4', 'molo_s5'].concat(['molo_s3']).sort());
        expect((await conn.stats()).cachedStatements).toBe(3);
      },
      { statementCacheSize: 3 },
    );
  });

  it('reads the same values on the unnamed, preparing and binary prepared paths, also pipelined', async () => {
    await withConnection(db, async (conn) => {
      const sql = "select $1::int4 as i, $2::int8 as big, $3::text as t, $4::timestamptz as ts, $5::bytea as b, $6::bool as f, $7::numeric as n, null::text as z, '{1,2}'::int4[] as arr";
      const at = new Date('2024-02-29T12:34:56.789Z');
      const params = [7, 9007199254740993n, 'héllo', at, Buffer.from([0, 255, 7]), true, '12.50'];
      const expected = { i: 7, big: 9007199254740993n, t: 'héllo', ts: at, b: Buffer.from([0, 255, 7]), f: true, n: '12.50', z: null, arr: [1, 2] };
      for (let run = 0; run < 4; run++) expect((await conn.query(sql, params)).rows).toEqual([expected]);
      // Pipelined uses while the statement is being prepared by another text's second use.
      const other = 'select $1::text as v, $2::int4 as w';
      const all = await Promise.all(Array.from({ length: 20 }, (_, i) => conn.query(other, [`v${i}`, i])));
      expect(all.map((r) => r.rows[0])).toEqual(Array.from({ length: 20 }, (_, i) => ({ v: `v${i}`, w: i })));
      expect(Object.keys(await prepared(conn))).toHaveLength(2);
    });
  });

  it('asks for binary results once the statement is described, text before', async () => {
    const types = new PgTypes();
    const int4 = types.get(23)!;
    const formats: string[] = [];
    types.add({
      ...int4,
      decodeText: (buf, start, end) => (formats.push('text'), int4.decodeText(buf, start, end)),
      decodeBinary: (buf, start, end) => (formats.push('binary'), int4.decodeBinary!(buf, start, end)),
    });
    await withConnection(
      db,
      async (conn) => {
        for (let i = 0; i < 4; i++) expect((await conn.query('select $1::int4 as x', [i])).rows).toEqual([{ x: i }]);
        expect(formats).toEqual(['text', 'text', 'binary', 'binary']);
        // A column without a binary decoder keeps the whole row in text.
        formats.length = 0;
        for (let i = 0; i < 3; i++) await conn.query("select $1::int4 as x, '(1,2)'::point as p", [i]);
        expect(formats).toEqual(['text', 'text', 'text']);
      },
      { types },
    );
  });

  it('a statement whose Parse fails fails every pipelined use with the same error, and is not kept', async () => {
    await withConnection(db, async (conn) => {
      const bad = 'select $1::int4 frm nowhere';
      const errors = await Promise.all(Array.from({ length: 4 }, (_, i) => rejection(conn.query(bad, [i]))));
      for (const error of errors) {
        expect(error).toBeInstanceOf(DbError);
        expect((error as DbError).sqlstate).toBe('42601');
      }
      expect(await prepared(conn)).toEqual({});
      expect((await conn.query('select $1::int4 as ok', [1])).rows).toEqual([{ ok: 1 }]);
    });
  });

  it('forgets its statements after DEALLOCATE ALL, and re-prepares when a cached plan went stale', async () => {
    await withConnection(db, async (conn) => {
      const sql = 'select $1::int4 as x';
      await conn.query(sql, [1]);
      await conn.query(sql, [2]);
      expect(Object.values(await prepared(conn))).toEqual([sql]);
      await conn.query('deallocate all');
      expect((await conn.query(sql, [3])).rows).toEqual([{ x: 3 }]);
      expect((await conn.query(sql, [4])).rows).toEqual([{ x: 4 }]);
      // A table whose columns change under a prepared `select *`: one failure (0A000), then fine.
      await conn.query('create table shifting (a int)');
      await conn.query('insert into shifting values (1)');
      const star = 'select * from shifting where a = $1';
      await conn.query(star, [1]);
      expect((await conn.query(star, [1])).rows).toEqual([{ a: 1 }]);
      await conn.query('alter table shifting add column b text');
      const stale = await rejection(conn.query(star, [1]));
      expect((stale as DbError).sqlstate).toBe('0A000');
      expect((await conn.query(star, [1])).rows).toEqual([{ a: 1, b: null }]);
    });
  });

  it('prepare(): checked at once, run with Bind + Execute only, closed on the server', async () => {
    await withConnection(db, async (conn) => {
      const stmt = await conn.prepare<{ y: number }>('select $1::int4 + 1 as y');
      expect(Object.values(await prepared(conn))).toEqual(['select $1::int4 + 1 as y']);
      expect((await stmt.query([41])).rows).toEqual([{ y: 42 }]);
      expect((await stmt.query([1])).rows).toEqual([{ y: 2 }]);
      const constant = await conn.prepare('select 42 as n');
      expect((await constant.query()).rows).toEqual([{ n: 42 }]);
      expect(Object.keys(await prepared(conn))).toHaveLength(2);
      await stmt.close();
      await constant.close();
      expect(await prepared(conn)).toEqual({});
      // Closed statements still run (prepared again on demand).
      expect((await stmt.query([0])).rows).toEqual([{ y: 1 }]);
      const syntax = await rejection(conn.prepare('selec 1'));
      expect((syntax as DbError).sqlstate).toBe('42601');
    });
  });
});
