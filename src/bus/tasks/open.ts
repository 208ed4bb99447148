/**
 * Opening a task queue store. SQLite has one writer per file, shared by everything in it, so by
 * default the queue gets a file of its own (`openSqliteTaskQueue`); `openTaskQueue(db)` puts it in
 * a database the caller already has (so `enqueue({ tx })` can join the caller's transactions, or a
 * Postgres pool shared by instances).
 */
import type { ActorRuntime } from '../../actors/index.js';
import type { Database } from '../../data/index.js';
import { openSqlite, type SqliteConfig, type SqliteSynchronous } from '../../data/sqlite/index.js';
import { SqlTaskQueue, type SqlTaskQueueOptions } from './sql-queue.js';

/**
 * An acknowledged enqueue is a promise that the task runs; `full` fsyncs its commit first, so a
 * power loss cannot forget it. Enqueues are batched (one fsync per batch); the lease, heartbeat and
 * settle commits pay one each too (docs/tasks.md, Durability).
 */
export const TASKS_DEFAULT_SYNCHRONOUS: SqliteSynchronous = 'full';

export type TaskQueueOptions = Omit<SqlTaskQueueOptions, 'ownsDatabase'>;

/** A task queue in `db` (tables created if missing). `close()` leaves the database open: it is the caller's. */
export function openTaskQueue(db: Database, options: TaskQueueOptions = {}): Promise<SqlTaskQueue> {
  return new SqlTaskQueue(db, options).open();
}

/** A task queue in a SQLite file of its own (`synchronous` default `full`); `close()` closes the file too. */
export async function openSqliteTaskQueue(system: ActorRuntime, sqlite: SqliteConfig, options: TaskQueueOptions = {}): Promise<SqlTaskQueue> {
  const db = await openSqlite(system, { name: 'tasks', ...sqlite, synchronous: sqlite.synchronous ?? TASKS_DEFAULT_SYNCHRONOUS });
  try {
    return await new SqlTaskQueue(db, { ...options, ownsDatabase: true }).open();
  } catch (error) {
    await db.close();
    throw error;
  }
}
