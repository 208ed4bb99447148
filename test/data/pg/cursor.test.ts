/**
 * Cursors (stream()) through the real server: batches through a portal, early exit closing it,
 * errors and timeouts mid-stream, other statements waiting their turn.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbError, StatementTimeout } from '../../../src/data/errors.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { eventually, sleep } from '../../support/systems.js';
import { rejection, withConnection } from './pg-support.js';

let db: FreshDatabase;
beforeAll(() => {
  db = freshDatabase('pgcursor');
});
afterAll(() => db.drop());

describe('stream (cursor)', () => {
  it('reads a result larger than maxRows in batches, with values bound', async () => {
    await withConnection(db, async (conn) => {
      let expected = 5;
      for await (const row of conn.stream<{ g: number; label: string }>('select g, $2::text || g as label from generate_series($1::int, 25004) g', [5, 'n'], undefined, { batchSize: 1000 })) {
        if (row.g !== expected || row.label !== `n${expected}`) throw new Error(`row ${expected}: ${JSON.stringify(row)}`);
        expected++;
      }
      expect(expected).toBe(25_005);
      expect((await conn.stats()).txStatus).toBe('I');
    });
  });

  it('breaking out of the loop closes the cursor; statements issued meanwhile wait, then run', async () => {
    await withConnection(db, async (conn) => {
      const seen: number[] = [];
      let waiting: Promise<unknown> | undefined;
      for await (const row of conn.stream<{ g: number }>('select g from generate_series(1, 100000) g', [], undefined, { batchSize: 100 })) {
        seen.push(row.g);
        if (row.g === 1) {
          waiting = conn.query('select 42 as answer');
          // The cursor holds the socket: the statement is queued, not written.
          await eventually(() => conn.inFlight === 1, 2_000, 'query accepted');
          expect(await conn.stats()).toMatchObject({ queued: 1 });
        }
        if (row.g === 250) break;
      }
      expect(seen).toHaveLength(250);
      expect(((await waiting) as { rows: unknown[] }).rows).toEqual([{ answer: 42 }]);
      expect(await conn.stats()).toMatchObject({ sent: 0, queued: 0, txStatus: 'I' });
      // Inside an explicit transaction the cursor leaves the transaction open.
      await conn.query('begin');
      let n = 0;
      for await (const _ of conn.stream('select g from generate_series(1, 30) g', undefined, undefined, { batchSize: 7 })) n++;
      expect(n).toBe(30);
      expect((await conn.stats()).txStatus).toBe('T');
      await conn.query('commit');
    });
  });

  it('an error in a later batch ends the loop with the server error; the connection goes on', async () => {
    await withConnection(db, async (conn) => {
      const rows: number[] = [];
      const error = await rejection(
        (async () => {
          for await (const row of conn.stream<{ q: number }>('select 3000 / (g - 1500) as q from generate_series(1, 2000) g', [], undefined, { batchSize: 1000 })) rows.push(row.q);
        })(),
      );
      expect(rows).toHaveLength(1000);
      expect(error).toBeInstanceOf(DbError);
      expect((error as DbError).sqlstate).toBe('22012');
      expect((error as DbError).callerStack).toContain('cursor.test.ts');
      expect((await conn.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
      // A statement that fails at once fails the first step.
      const early = await rejection(
        (async () => {
          for await (const _ of conn.stream('select nope')) void _;
        })(),
      );
      expect((early as DbError).sqlstate).toBe('42703');
      // The error is answered as soon as it is read; the cursor's Sync completes right after.
      await conn.ping();
      expect(await conn.stats()).toMatchObject({ sent: 0, queued: 0, txStatus: 'I' });
    });
  });

  it('each batch has the context timeout: a slow batch is cancelled with StatementTimeout', async () => {
    await withConnection(db, async (conn) => {
      const rows: number[] = [];
      const started = Date.now();
      const error = await rejection(
        (async () => {
          const sql = 'select g, pg_sleep(case when g = 3 then 5 else 0 end) from generate_series(1, 5) g';
          for await (const row of conn.stream<{ g: number }>(sql, [], { timeoutMs: 300 }, { batchSize: 2 })) rows.push(row.g);
        })(),
      );
      expect(error).toBeInstanceOf(StatementTimeout);
      expect(rows).toEqual([1, 2]);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect((await conn.query('select 2 as ok')).rows).toEqual([{ ok: 2 }]);
      // A consumer that stops asking holds the connection only for its timeout: then the cursor is closed.
      let other: Promise<unknown> | undefined;
      let otherDone = false;
      const idle = await rejection(
        (async () => {
          for await (const row of conn.stream<{ g: number }>('select g from generate_series(1, 100) g', [], { timeoutMs: 200 }, { batchSize: 2 })) {
            if (row.g === 1) {
              other = conn.query('select 5 as n').then((r) => ((otherDone = true), r));
              await sleep(500);
              expect(otherDone).toBe(true);
            }
          }
        })(),
      );
      expect(idle).toBeInstanceOf(DbError);
      expect(idle.message).toContain('cursor is closed');
      expect(((await other) as { rows: unknown[] }).rows).toEqual([{ n: 5 }]);
      // Aborting between batches closes the cursor at the next step.
      const controller = new AbortController();
      const aborted = await rejection(
        (async () => {
          for await (const row of conn.stream<{ g: number }>('select g from generate_series(1, 100) g', [], { signal: controller.signal }, { batchSize: 10 })) {
            if (row.g === 5) controller.abort(new Error('stop'));
          }
        })(),
      );
      expect((aborted as DbError).sqlstate).toBe('57014');
      await conn.ping();
      expect(await conn.stats()).toMatchObject({ sent: 0, queued: 0, txStatus: 'I' });
    });
  });
});
