/**
 * Opening a task queue store. SQLite has one writer per file, shared by everything in it, so by
 * default the queue gets a file of its own (`openSqliteTaskQueue`); `openTaskQueue(db)` puts it in
 * a database the caller already has (so `enqueue({ tx })` can join the caller's transactions, or a
 * Postgres pool shared by instances).
 */
import type { ActorRuntime } from '../../actors/index.js';
import type { Database } from '../../data/index.js';
import { openSqlite, type SqliteConfig } from '../../data/sqlite/index.js';
import { SqlTaskQueue, type SqlTaskQueueOptions } from './sql-queue.js';

export type TaskQueueOptions = Omit<SqlTaskQueueOptions, 'ownsDatabase'>;

/** A task queue in `db` (tables created if missing). `close()` leaves the database open: it is the caller's. */
export function openTaskQueue(db: Database, options: TaskQueueOptions = {}): Promise<SqlTaskQueue> {
  return new SqlTaskQueue(db, options).open();
}

/** A task queue in a SQLite file of its own; `close()` closes the file too. */
export async function openSqliteTaskQueue(system: ActorRuntime, sqlite: SqliteConfig, options: TaskQueueOptions = {}): Promise<SqlTaskQueue> {
  const db = await openSqlite(system, { name: 'tasks', ...sqlite });
  try {
    return await new SqlTaskQueue(db, { ...options, ownsDatabase: true }).open();
  } catch (error) {
    await db.close();
    throw error;
  }
}
