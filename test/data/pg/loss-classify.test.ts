/**
 * Which statements may be retried after a lost reply. `SELECT w($1)`, where `w` inserts, reads
 * like a read but writes: when its reply is lost after the commit, the caller must get
 * OutcomeUnknown (never retryable), not a retryable ConnectionLost that would make it write twice.
 * Only calls of known side-effect-free functions keep a SELECT a read, unless the caller says
 * `{ readOnly: true }`. The reply is lost by a proxy that cuts the client socket as the answer
 * comes back from the real server, after it committed.
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionLost, OutcomeUnknown } from '../../../src/data/errors.js';
import { connectPostgres, isReadOnlySql } from '../../../src/data/pg/index.js';
import { freshDatabase, psql, type FreshDatabase } from '../../support/pg.js';
import { testSystem } from '../../support/systems.js';
import { configOf, rejection } from './pg-support.js';

let db: FreshDatabase;
beforeAll(() => {
  db = freshDatabase('pgclassify');
  psql('create table t (n int); create function w(v int) returns int language sql as $$ insert into t values (v) returning v $$; create function r() returns int language sql stable as $$ select count(*)::int from t $$;', db.database);
});
afterAll(() => db.drop());

/** A proxy that, once the client has sent `marker`, drops the server's next answer and cuts the client. */
async function cuttingProxy(marker: string): Promise<{ port: number; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const proxy: Server = createServer((client) => {
    const server = netConnect(db.port, db.host);
    sockets.push(client, server);
    let armed = false;
    client.on('data', (chunk: Buffer) => {
      if (chunk.includes(marker)) armed = true;
      server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      if (armed) client.destroy();
      else client.write(chunk);
    });
    client.on('error', () => undefined);
    server.on('error', () => undefined);
    client.on('close', () => server.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    port: (proxy.address() as { port: number }).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

describe('isReadOnlySql', () => {
  it('reads only with no calls but known side-effect-free functions', () => {
    const reads = [
      'select 1',
      'select count(*), max(n) from t where n = $1 and n in (select n from t)',
      'select $1::numeric(10,2), now(), coalesce(n, 0), lower($2) from t',
      "select data->>'k' from t where exists (select 1 from u where u.id = t.id)",
      'with x as (select 1 as a) select * from x',
      'values (1), (2)',
      "select /* w(1) */ 'w(1)', $$ w(1) $$, E'\\' w(1)'",
      'explain select 1',
    ];
    const writes = [
      'SELECT w($1)',
      'select n, w(n) from t',
      'select "w"(1)',
      'select public.count(1)',
      "select 'a\\' or w(1) --'",
      'select a +++ b from t',
      'select nextval($1)',
      'select pg_advisory_lock(1)',
      'select set_config($1, $2, false)',
      'select 1; delete from t',
      'select * from t for update',
      'with x as (insert into t values (1) returning *) select * from x',
      'select 1 into t2',
      'insert into t values (1)',
    ];
    for (const sql of reads) expect({ sql, read: isReadOnlySql(sql) }).toEqual({ sql, read: true });
    for (const sql of writes) expect({ sql, read: isReadOnlySql(sql) }).toEqual({ sql, read: false });
  });
});

describe('a lost reply after commit', () => {
  it('SELECT of a writing function: OutcomeUnknown, and the row is there once', async () => {
    const proxy = await cuttingProxy('w($1)');
    try {
      const conn = await connectPostgres(testSystem(), configOf(db, { port: proxy.port }));
      const error = await rejection(conn.query('SELECT w($1)', [7]));
      expect(error).toBeInstanceOf(OutcomeUnknown);
      expect((error as OutcomeUnknown).retryable).toBe(false);
      expect(psql('select count(*) from t where n = 7', db.database)).toBe('1');
      await conn.close();
    } finally {
      await proxy.close();
    }
  });

  it('the caller may vouch for a read with { readOnly: true }: retryable ConnectionLost', async () => {
    const proxy = await cuttingProxy('r()');
    try {
      const conn = await connectPostgres(testSystem(), configOf(db, { port: proxy.port }));
      const error = await rejection(conn.query('select r()', [], undefined, { readOnly: true }));
      expect(error).toBeInstanceOf(ConnectionLost);
      expect((error as ConnectionLost).retryable).toBe(true);
      await conn.close();
    } finally {
      await proxy.close();
    }
  });
});
