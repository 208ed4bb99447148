/**
 * A KV store in a SQLite file of its own. `openKv(db)` puts one in a database the caller already has
 * (and so at that database's `synchronous`); this opens the file and closes it with the store.
 */
import type { ActorRuntime } from '../../actors/index.js';
import { openSqlite, type SqliteConfig, type SqliteSynchronous } from '../sqlite/index.js';
import { SqlKvStore, type SqlKvOptions } from './sql-store.js';

/**
 * A `set` is acknowledged once it commits; `full` fsyncs that commit first, so an acknowledged
 * write (a lease, a fencing version) survives a power loss. Each write pays one fsync: choose
 * `normal` for data that may lose its last writes on a power cut (docs/kv.md, Durability).
 */
export const KV_DEFAULT_SYNCHRONOUS: SqliteSynchronous = 'full';

/** A KV store in the SQLite file `sqlite.file` (`synchronous` default `full`); `close()` closes the file too. */
export async function openSqliteKv(system: ActorRuntime, sqlite: SqliteConfig, options: Omit<SqlKvOptions, 'ownsDatabase'> = {}): Promise<SqlKvStore> {
  const db = await openSqlite(system, { name: 'kv', ...sqlite, synchronous: sqlite.synchronous ?? KV_DEFAULT_SYNCHRONOUS });
  try {
    return await new SqlKvStore(db, { ...options, ownsDatabase: true }).open(options.ctx);
  } catch (error) {
    await db.close();
    throw error;
  }
}
