/**
 * Connection loss through the real server: a backend terminated mid-statement
 * (pg_terminate_backend from another session) and a socket cut by a proxy. Reads fail with
 * retryable ConnectionLost, writes and COMMITs in flight with OutcomeUnknown; the actor exits with
 * `{ shutdown: error }` and `ended` settles.
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isShutdownWith } from '../../../src/actors/index.js';
import { ConnectionLost, DbError, OutcomeUnknown } from '../../../src/data/errors.js';
import { connectPostgres, type PgConnection } from '../../../src/data/pg/index.js';
import { freshDatabase, psql, type FreshDatabase } from '../../support/pg.js';
import { eventually, testSystem } from '../../support/systems.js';
import { configOf, rejection } from './pg-support.js';

let db: FreshDatabase;
beforeAll(() => {
  db = freshDatabase('pgloss');
  psql('create table t (n int)', db.database);
  psql(
    `create function slow_commit() returns trigger language plpgsql as $$ begin perform pg_sleep(5); return null; end $$;
     create table c (n int);
     create constraint trigger slow_commit after insert on c deferrable initially deferred for each row execute function slow_commit();`,
    db.database,
  );
});
afterAll(() => db.drop());

/** Waits until the backend runs `prefix`, then terminates it from another session. */
async function terminateWhileRunning(conn: PgConnection, prefix: string): Promise<void> {
  await eventually(() => psql(`select state || ':' || query from pg_stat_activity where pid = ${conn.backendPid}`).startsWith(`active:${prefix}`), 5_000, `backend running ${prefix}`);
  expect(psql(`select pg_terminate_backend(${conn.backendPid})`)).toBe('t');
}

async function expectEnded(conn: PgConnection): Promise<void> {
  const reason = await conn.ended;
  expect(isShutdownWith(reason)).toBe(true);
  expect((reason as { shutdown: unknown }).shutdown).toBeInstanceOf(ConnectionLost);
  expect(conn.open).toBe(false);
  expect(conn.system.isAlive(conn.ref)).toBe(false);
}

describe('connection loss', () => {
  it('terminated mid-read: ConnectionLost (retryable, with the server reason); pipelined statements after a write are in doubt', async () => {
    const system = testSystem();
    const conn = await connectPostgres(system, configOf(db, { maxInFlight: 3 }));
    const read = rejection(conn.query('select pg_sleep(5)'));
    const write = rejection(conn.query('insert into t values ($1)', [1]));
    const afterWrite = rejection(conn.query('select $1::int4', [2]));
    const neverSent = rejection(conn.query('insert into t values ($1)', [3]));
    await terminateWhileRunning(conn, 'select pg_sleep');
    const lost = (await read) as DbError;
    expect(lost).toBeInstanceOf(ConnectionLost);
    expect(lost.retryable).toBe(true);
    expect(lost.sqlstate).toBe('57P01');
    expect(lost.message).toContain('terminating connection');
    expect(lost.callerStack).toContain('loss.test.ts');
    const unknown = await write;
    expect(unknown).toBeInstanceOf(OutcomeUnknown);
    expect((unknown as DbError).retryable).toBe(false);
    // Could have run inside a transaction the write opened: in doubt too.
    expect(await afterWrite).toBeInstanceOf(OutcomeUnknown);
    // Never written: certainly did nothing, so safe to retry even though it is an insert.
    const unsent = (await neverSent) as DbError;
    expect(unsent).toBeInstanceOf(ConnectionLost);
    expect(unsent.message).toContain('never sent');
    await expectEnded(conn);
    expect(await rejection(conn.query('select 1'))).toBeInstanceOf(ConnectionLost);
    await conn.close();
  });

  it('terminated inside an explicit transaction: even a read is OutcomeUnknown', async () => {
    const system = testSystem();
    const conn = await connectPostgres(system, configOf(db));
    await conn.query('begin');
    await conn.query('insert into t values ($1)', [10]);
    const inTx = rejection(conn.query('select pg_sleep(5)'));
    await terminateWhileRunning(conn, 'select pg_sleep');
    expect(await inTx).toBeInstanceOf(OutcomeUnknown);
    await expectEnded(conn);
    expect(psql('select count(*) from t where n = 10', db.database)).toBe('0');
  });

  it('terminated during COMMIT: OutcomeUnknown, never retryable', async () => {
    const system = testSystem();
    const conn = await connectPostgres(system, configOf(db));
    await conn.query('begin');
    await conn.query('insert into c values ($1)', [1]);
    // The deferred trigger makes COMMIT itself slow.
    const commit = rejection(conn.query('commit'));
    await terminateWhileRunning(conn, 'commit');
    const error = (await commit) as DbError;
    expect(error).toBeInstanceOf(OutcomeUnknown);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('outcome unknown');
    await expectEnded(conn);
  });

  it('a socket cut under a statement: ConnectionLost for a read, OutcomeUnknown for a write', async () => {
    const upstream: Socket[] = [];
    const clients: Socket[] = [];
    const proxy: Server = createServer((client) => {
      const server = netConnect(db.port, db.host);
      upstream.push(server);
      clients.push(client);
      client.pipe(server).pipe(client);
      client.on('error', () => undefined);
      server.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as { port: number }).port;
    try {
      const system = testSystem();
      const reader = await connectPostgres(system, configOf(db, { port }));
      const writer = await connectPostgres(system, configOf(db, { port }));
      const read = rejection(reader.query('select pg_sleep(5)'));
      const write = rejection(writer.query('insert into t select $1::int4 from pg_sleep(5)', [1]));
      await eventually(() => psql("select count(*) from pg_stat_activity where state = 'active' and query like '%pg_sleep(5)%' and pid <> pg_backend_pid()") === '2', 5_000, 'both running');
      for (const socket of clients) socket.destroy();
      const lost = (await read) as DbError;
      expect(lost).toBeInstanceOf(ConnectionLost);
      expect(lost.retryable).toBe(true);
      expect(lost.connection).toMatchObject({ host: db.host, port });
      expect(await write).toBeInstanceOf(OutcomeUnknown);
      await expectEnded(reader);
      await expectEnded(writer);
    } finally {
      for (const socket of upstream) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });
});
