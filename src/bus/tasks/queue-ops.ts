/**
 * Whole-queue operations, as BullMQ's `pause`/`resume`/`drain`/`obliterate` and Oban's
 * `pause_queue`/`resume_queue`: a pause is a row the lease statement reads, so it holds on every
 * instance sharing the database at once; purge deletes what waits; delete drops the queue and
 * every row of it. Rows go with their envelope chunks and idempotency keys, so a purged task's key
 * does not answer "duplicate" for a task that no longer exists.
 */
import type { Database, Queryable } from '../../data/index.js';
import type { OpsContext } from './lease-ops.js';
import type { TaskState } from './lifecycle.js';
import { sqlStates, TAKEN } from './transitions.js';
import { TaskStateConflict } from './errors.js';

/** What `purge` deletes by default: tasks not yet taken (queued, or waiting for a retry). */
export const PURGEABLE: readonly TaskState[] = ['queued', 'failed-retryable'];

/** Marks the queue paused (true) or not; resolves with whether that changed anything. */
export async function setPaused(db: Queryable, c: OpsContext, queue: string, paused: boolean, now: number): Promise<boolean> {
  const { affected } = paused
    ? await db.query(c.sql(`INSERT INTO ${c.tables.paused} (queue, paused_at) VALUES ($1::text, $2::int8) ON CONFLICT (queue) DO NOTHING`), [queue, now])
    : await db.query(c.sql(`DELETE FROM ${c.tables.paused} WHERE queue = $1::text`), [queue]);
  return affected > 0;
}

export async function isPaused(db: Queryable, c: OpsContext, queue: string): Promise<boolean> {
  const { rows } = await db.query(c.sql(`SELECT 1 AS paused FROM ${c.tables.paused} WHERE queue = $1::text`), [queue]);
  return rows.length > 0;
}

/** Deletes the queue's tasks in `states` (with their chunks and idempotency keys) in one transaction; resolves with how many. */
export function purgeTasks(db: Database, c: OpsContext, queue: string, states: readonly TaskState[]): Promise<number> {
  return db.transaction((tx) => deleteTasks(tx, c, queue, `state IN ${sqlStates(states)}`));
}

/**
 * Deletes the queue, its pause and every task of it. Tasks still taken (leased or running) refuse
 * it with TaskStateConflict unless `force`: their workers' settles then find nothing and are skipped.
 */
export function deleteQueue(db: Database, c: OpsContext, queue: string, force: boolean): Promise<number> {
  return db.transaction(async (tx) => {
    if (!force) {
      const { rows } = await tx.query(c.sql(`SELECT id, state FROM ${c.tables.tasks} WHERE queue = $1::text AND state IN ${sqlStates(TAKEN)} LIMIT 1`), [queue]);
      if (rows.length > 0) throw new TaskStateConflict(String(rows[0]!.id), String(rows[0]!.state), 'delete the queue (force: true deletes tasks in flight too) of');
    }
    const deleted = await deleteTasks(tx, c, queue, '1 = 1');
    await tx.query(c.sql(`DELETE FROM ${c.tables.paused} WHERE queue = $1::text`), [queue]);
    await tx.query(c.sql(`DELETE FROM ${c.tables.idem} WHERE queue = $1::text`), [queue]);
    await tx.query(c.sql(`DELETE FROM ${c.tables.queues} WHERE name = $1::text`), [queue]);
    return deleted;
  });
}

async function deleteTasks(tx: Queryable, c: OpsContext, queue: string, where: string): Promise<number> {
  const t = c.tables;
  const picked = `SELECT id FROM ${t.tasks} WHERE queue = $1::text AND ${where}`;
  await tx.query(c.sql(`DELETE FROM ${t.chunks} WHERE task_id IN (${picked})`), [queue]);
  await tx.query(c.sql(`DELETE FROM ${t.idem} WHERE queue = $1::text AND task_id IN (${picked})`), [queue]);
  const { affected } = await tx.query(c.sql(`DELETE FROM ${t.tasks} WHERE queue = $1::text AND ${where}`), [queue]);
  return affected;
}

