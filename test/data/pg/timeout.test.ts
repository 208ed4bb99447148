/**
 * Statement timeouts (the context's remaining time), abort signals and cancel(), through the real
 * server: the statement is cancelled with a CancelRequest on a separate socket and the connection
 * stays usable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbError, StatementTimeout } from '../../../src/data/errors.js';
import { freshDatabase, psql, type FreshDatabase } from '../../support/pg.js';
import { eventually, sleep } from '../../support/systems.js';
import { rejection, withConnection } from './pg-support.js';

let db: FreshDatabase;
beforeAll(() => {
  db = freshDatabase('pgtimeout');
});
afterAll(() => db.drop());

/** What the backend is doing, as another session sees it. */
function backendState(pid: number): string {
  return psql(`select coalesce(state, '') || ':' || left(query, 40) from pg_stat_activity where pid = ${pid}`);
}

describe('statement timeout and cancel', () => {
  it('select pg_sleep(5) with a 200 ms timeout fails with StatementTimeout; the backend stops and the connection goes on', async () => {
    await withConnection(db, async (conn) => {
      const started = Date.now();
      const error = await rejection(conn.query('select pg_sleep(5)', undefined, { timeoutMs: 200 }));
      const elapsed = Date.now() - started;
      expect(error).toBeInstanceOf(StatementTimeout);
      expect((error as StatementTimeout).timeoutMs).toBe(200);
      expect((error as StatementTimeout).callerStack).toContain('timeout.test.ts');
      expect(elapsed).toBeGreaterThanOrEqual(190);
      expect(elapsed).toBeLessThan(1_500);
      // The sleep was cancelled on the server, not left running behind the next statement.
      const next = Date.now();
      expect((await conn.query('select $1::int4 as n', [7])).rows).toEqual([{ n: 7 }]);
      expect(Date.now() - next).toBeLessThan(1_000);
      expect(backendState(conn.backendPid)).toMatch(/^idle:/);
      // A deadline already past fails at once; a timeout in a transaction aborts it.
      expect(await rejection(conn.query('select 1', undefined, { deadline: Date.now() - 1 }))).toBeInstanceOf(StatementTimeout);
      await conn.query('begin');
      expect(await rejection(conn.query('select pg_sleep(5)', undefined, { timeoutMs: 100 }))).toBeInstanceOf(StatementTimeout);
      expect(((await rejection(conn.query('select 1'))) as DbError).sqlstate).toBe('25P02');
      await conn.query('rollback');
      expect((await conn.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
    });
  });

  it('a statement queued behind a slow one times out on its own deadline without cancelling the slow one', async () => {
    await withConnection(
      db,
      async (conn) => {
        const slow = conn.query<{ done: string }>("select pg_sleep(0.6), 'slow' as done");
        const started = Date.now();
        const queued = await rejection(conn.query('select 1', undefined, { timeoutMs: 100 }));
        expect(queued).toBeInstanceOf(StatementTimeout);
        expect(Date.now() - started).toBeLessThan(500);
        expect((await slow).rows[0]!.done).toBe('slow');
        // Pipelined (written but not running yet): answered at its deadline, its result dropped later.
        const slow2 = conn.query<{ done: string }>("select pg_sleep(0.6), 'slow2' as done");
        const behind = await rejection(conn.query('select $1::int4', [1], { timeoutMs: 100 }));
        expect(behind).toBeInstanceOf(StatementTimeout);
        expect((await slow2).rows[0]!.done).toBe('slow2');
        expect((await conn.query('select 3 as n')).rows).toEqual([{ n: 3 }]);
        // Timed out behind another, and still running once it reached the head: cancelled after a short grace.
        const head = conn.query('select pg_sleep(0.3)');
        expect(await rejection(conn.query('select pg_sleep(5)', undefined, { timeoutMs: 100 }))).toBeInstanceOf(StatementTimeout);
        await head;
        const next = Date.now();
        expect((await conn.query('select 4 as n')).rows).toEqual([{ n: 4 }]);
        expect(Date.now() - next).toBeLessThan(1_500);
      },
      { maxInFlight: 2 },
    );
  });

  it('aborting the context signal cancels the statement', async () => {
    await withConnection(db, async (conn) => {
      const controller = new AbortController();
      const started = Date.now();
      const running = rejection(conn.query('select pg_sleep(5)', undefined, { signal: controller.signal }));
      await sleep(100);
      const reason = new Error('user went away');
      controller.abort(reason);
      const error = (await running) as DbError;
      expect(error).toBeInstanceOf(DbError);
      expect(error.sqlstate).toBe('57014');
      expect(error.cause).toBe(reason);
      expect(Date.now() - started).toBeLessThan(1_500);
      expect((await conn.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
      expect(backendState(conn.backendPid)).toMatch(/^idle:/);
      // Already aborted: refused without being sent.
      const already = (await rejection(conn.query('select 2', undefined, { signal: AbortSignal.abort('no') }))) as DbError;
      expect(already.sqlstate).toBe('57014');
      expect((await conn.stats()).sent).toBe(0);
    });
  });

  it('cancel() cancels what the backend runs now', async () => {
    await withConnection(db, async (conn) => {
      const running = rejection(conn.query('select pg_sleep(5)'));
      await eventually(() => backendState(conn.backendPid).startsWith('active:select pg_sleep'), 3_000, 'sleep running');
      await conn.cancel();
      const error = (await running) as DbError;
      expect(error.sqlstate).toBe('57014');
      expect(error.code).toBe('DB_QUERY_FAILED');
      expect((await conn.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
    });
  });
});
