/**
 * The Postgres connection actor through the real server: statements, pipelining, errors, caps.
 */
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_ROWS, MAX_PARAMETERS, MAX_ROW_BYTES } from '../../../src/data/database.js';
import { ConnectionLost, DbError, EncodeFailed, ProtocolError, QueueFull, RowTooLarge, TooManyParameters, TooManyRows } from '../../../src/data/errors.js';
import { connectPostgres, PgTypes } from '../../../src/data/pg/index.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { eventually, testSystem } from '../../support/systems.js';
import { configOf, rejection, withConnection } from './pg-support.js';

let db: FreshDatabase;
beforeAll(() => {
  db = freshDatabase('pgconn');
});
afterAll(() => db.drop());

describe('PgConnection', () => {
  it('answers 10k sequential and 128 concurrent statements on one connection', async () => {
    await withConnection(db, async (conn) => {
      for (let i = 0; i < 10_000; i++) {
        const r = await conn.query<{ x: number }>('select $1::int4 as x', [i]);
        if (r.rows[0]!.x !== i) throw new Error(`row ${i} came back as ${r.rows[0]!.x}`);
      }
      const results = await Promise.all(Array.from({ length: 128 }, (_, i) => conn.query<{ x: number; s: string }>('select $1::int4 as x, $2::text as s', [i, `v${i}`])));
      expect(results.map((r) => r.rows[0])).toEqual(Array.from({ length: 128 }, (_, i) => ({ x: i, s: `v${i}` })));
      expect(conn.inFlight).toBe(0);
    });
  }, 60_000);

  it('pipelines: statements are written while earlier ones still run, up to maxInFlight, then queue', async () => {
    await withConnection(
      db,
      async (conn) => {
        const slow = conn.query('select pg_sleep(0.5)');
        const quick = Array.from({ length: 40 }, (_, i) => conn.query<{ x: number }>('select $1::int4 as x', [i]));
        // While the first runs, 15 more are already on the wire and the rest wait in the actor.
        await eventually(() => conn.inFlight === 41, 2_000, 'all calls accepted');
        const stats = await conn.stats();
        expect(stats.sent).toBe(16);
        expect(stats.queued).toBe(25);
        await slow;
        expect((await Promise.all(quick)).map((r) => r.rows[0]!.x)).toEqual(Array.from({ length: 40 }, (_, i) => i));
        expect(await conn.stats()).toMatchObject({ sent: 0, queued: 0 });
      },
      { maxInFlight: 16 },
    );
  });

  it('fails fast with QueueFull naming the cap when more statements wait than maxQueued', async () => {
    await withConnection(
      db,
      async (conn) => {
        const accepted = [conn.query('select pg_sleep(0.2)'), conn.query('select 1'), conn.query('select 2')];
        const refused = await rejection(conn.query('select 3'));
        expect(refused).toBeInstanceOf(QueueFull);
        expect((refused as QueueFull).cap).toBe('pg.maxQueued');
        expect((refused as QueueFull).limit).toBe(2);
        expect((refused as QueueFull).retryable).toBe(true);
        await Promise.all(accepted);
        expect((await conn.query('select 4 as n')).rows).toEqual([{ n: 4 }]);
      },
      { maxInFlight: 1, maxQueued: 2 },
    );
  });

  it('binds values as parameters: injection strings are stored literally', async () => {
    await withConnection(db, async (conn) => {
      await conn.query('create table notes (id serial primary key, body text not null)');
      const hostile = ["'); drop table notes; --", 'Robert"); DROP TABLE notes;--', '$1', '\\', "'' or 1=1 --", '\u00e9\u{1f600}', ';select pg_sleep(10);'];
      for (const body of hostile) await conn.query('insert into notes (body) values ($1)', [body]);
      const r = await conn.query<{ body: string }>('select body from notes order by id');
      expect(r.rows.map((row) => row.body)).toEqual(hostile);
      const count = await conn.query<{ n: string }>('select count(*)::text as n from notes where body = $1', ["'' or 1=1 --"]);
      expect(count.rows[0]!.n).toBe('1');
    });
  });

  it('reports commands and affected rows from the command tag', async () => {
    await withConnection(db, async (conn) => {
      await conn.query('create table counts (n int)');
      const insert = await conn.query('insert into counts select generate_series(1, $1::int)', [3]);
      expect(insert).toMatchObject({ command: 'INSERT', affected: 3, lastInsertId: null, rows: [] });
      const update = await conn.query('update counts set n = n + 1 where n > $1', [1]);
      expect(update).toMatchObject({ command: 'UPDATE', affected: 2 });
      const select = await conn.query('select n from counts order by n');
      expect(select.command).toBe('SELECT');
      expect(select.fields).toEqual([{ name: 'n', typeOid: 23 }]);
      const ddl = await conn.query('create index on counts (n)');
      expect(ddl).toMatchObject({ command: 'CREATE INDEX', affected: 0 });
      // A simple query of several statements answers with the last one's result.
      const multi = await conn.query('select 1 as a; select 2 as b');
      expect(multi.rows).toEqual([{ b: 2 }]);
    });
  });

  it('server errors carry the SQLSTATE, every field, the caller stack and the redacted connection', async () => {
    await withConnection(
      db,
      async (conn) => {
        await conn.query('create table users (id int primary key, email text constraint users_email_key unique)');
        await conn.query('insert into users values ($1, $2)', [1, 'a@example.com']);
        const error = (await rejection(conn.query('insert into users values ($1, $2)', [2, 'a@example.com']))) as DbError;
        expect(error).toBeInstanceOf(DbError);
        expect(error).toMatchObject({
          code: 'DB_QUERY_FAILED',
          sqlstate: '23505',
          severity: 'ERROR',
          constraint: 'users_email_key',
          table: 'users',
          schema: 'public',
          retryable: false,
          connection: { backend: 'postgres', host: db.host, port: db.port, database: db.database, user: db.user },
        });
        expect(error.detail).toContain('a@example.com');
        expect(error.routine).toBeTypeOf('string');
        expect(error.file).toBeTypeOf('string');
        expect(error.params).toBeUndefined();
        expect(error.callerStack).toContain('connection.test.ts');
        expect(JSON.stringify(error.connection)).not.toContain('secret');
        const position = (await rejection(conn.query('select nope from users'))) as DbError;
        expect(position).toMatchObject({ sqlstate: '42703', position: 8 });
        // With debug, the parameters come along.
        const debug = (await rejection(conn.query('insert into users values ($1, $2)', [3, 'a@example.com'], { debug: true }))) as DbError;
        expect(debug.params).toEqual([3, 'a@example.com']);
        expect(debug.callerStack).toContain('connection.test.ts');
        // The connection goes on.
        expect((await conn.query('select count(*)::int as n from users')).rows).toEqual([{ n: 1 }]);
        // The handle and its actor hold the password nowhere a log or inspect could show it.
        expect(inspect(conn, { depth: 8 })).not.toContain('secret-never-shown');
        expect(inspect(error, { depth: 8 })).not.toContain('secret-never-shown');
      },
      { password: 'secret-never-shown', requireAuth: false },
    );
  });

  it('maxRows: past it the query fails with TooManyRows (pointing to stream) and the connection goes on', async () => {
    await withConnection(db, async (conn) => {
      const small = (await rejection(conn.query('select g from generate_series(1, $1::int) g', [50], undefined, { maxRows: 10 }))) as TooManyRows;
      expect(small).toBeInstanceOf(TooManyRows);
      expect(small.maxRows).toBe(10);
      expect(small.message).toContain('stream()');
      const simple = await rejection(conn.query(`select g from generate_series(1, ${DEFAULT_MAX_ROWS + 1}) g`));
      expect(simple).toBeInstanceOf(TooManyRows);
      expect((simple as TooManyRows).maxRows).toBe(DEFAULT_MAX_ROWS);
      const exact = await conn.query('select g from generate_series(1, 10) g', undefined, undefined, { maxRows: 10 });
      expect(exact.rows).toHaveLength(10);
      expect((await conn.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
    });
  });

  it('refuses more than 1,024 parameters, oversized values and unencodable ones before sending', async () => {
    await withConnection(db, async (conn) => {
      const many = Array.from({ length: MAX_PARAMETERS }, (_, i) => i);
      const sql = `select ${many.map((i) => `$${i + 1}::int4`).join(' + ')} as total`;
      expect((await conn.query<{ total: number }>(sql, many)).rows[0]!.total).toBe((MAX_PARAMETERS * (MAX_PARAMETERS - 1)) / 2);
      const tooMany = await rejection(conn.query(sql, [...many, 1]));
      expect(tooMany).toBeInstanceOf(TooManyParameters);
      expect((tooMany as TooManyParameters).max).toBe(MAX_PARAMETERS);
      const big = await rejection(conn.query('select length($1::text)', ['x'.repeat(MAX_ROW_BYTES + 1)]));
      expect(big).toBeInstanceOf(RowTooLarge);
      // A row larger than the cap is skipped as it arrives (never buffered); the connection goes on.
      const huge = await rejection(conn.query('select 1 as a, repeat($1::text, $2::int4) as big', ['x', MAX_ROW_BYTES + 1]));
      expect(huge).toBeInstanceOf(RowTooLarge);
      expect((huge as RowTooLarge).maxBytes).toBe(MAX_ROW_BYTES);
      const symbol = await rejection(conn.query('select $1::text', [Symbol('no') as unknown as string]));
      expect(symbol).toBeInstanceOf(EncodeFailed);
      expect((await conn.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
    });
  });

  it('a value no decoder can read fails that statement only; the rest of its rows are drained', async () => {
    const types = new PgTypes();
    const int4 = types.get(23)!;
    const picky = (buf: Buffer, start: number, end: number): unknown => {
      const value = int4.decodeText(buf, start, end);
      if (value === 13) throw new ProtocolError('cannot decode int4: 13 is unlucky');
      return value;
    };
    types.add({ ...int4, decodeText: picky, decodeBinary: undefined });
    await withConnection(
      db,
      async (conn) => {
        const error = await rejection(conn.query('select g::int4 from generate_series(1, 100) g'));
        expect(error).toBeInstanceOf(ProtocolError);
        expect(error.message).toContain('unlucky');
        expect((await conn.query('select 7::int4 as n')).rows).toEqual([{ n: 7 }]);
        const streamed: number[] = [];
        const streamError = await rejection(
          (async () => {
            for await (const row of conn.stream<{ g: number }>('select g::int4 from generate_series(1, 100) g', [], undefined, { batchSize: 5 })) streamed.push(row.g);
          })(),
        );
        expect(streamError).toBeInstanceOf(ProtocolError);
        expect(streamed).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        expect((await conn.query('select 8::int4 as n')).rows).toEqual([{ n: 8 }]);
      },
      { types },
    );
  });

  it('connects through the Unix socket directory', async () => {
    await withConnection(
      db,
      async (conn) => {
        const r = await conn.query<{ addr: string | null; db: string; pid: number }>('select inet_client_addr() as addr, current_database() as db, pg_backend_pid() as pid');
        expect(r.rows[0]).toEqual({ addr: null, db: db.database, pid: conn.backendPid });
        expect(conn.serverParams.server_version).toMatch(/^\d+/);
      },
      { host: '/var/run/postgresql' },
    );
  });

  it('sends startup parameters; ping; close ends the actor normally and later calls fail', async () => {
    const system = testSystem();
    const conn = await connectPostgres(system, configOf(db, { applicationName: 'molo-test', params: { search_path: 'pg_catalog', TimeZone: 'UTC' } }));
    const r = await conn.query<{ app: string; sp: string }>("select current_setting('application_name') as app, current_setting('search_path') as sp");
    expect(r.rows[0]).toEqual({ app: 'molo-test', sp: 'pg_catalog' });
    expect(conn.serverParams.TimeZone).toBe('UTC');
    await conn.ping();
    expect(conn.open).toBe(true);
    await conn.close();
    expect(conn.open).toBe(false);
    expect(await conn.ended).toBe('normal');
    expect(system.isAlive(conn.ref)).toBe(false);
    expect(await rejection(conn.query('select 1'))).toBeInstanceOf(ConnectionLost);
  });
});
