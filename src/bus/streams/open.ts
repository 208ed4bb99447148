/**
 * Opening a stream store. SQLite has one writer per file, shared by everything in it, so by default
 * a stream store gets a file of its own (`openSqliteStreams`); `openStreams(db)` puts it in a
 * database the caller already has (the app's SQLite file, or a Postgres pool shared by instances).
 */
import type { ActorRuntime } from '../../actors/index.js';
import type { Database } from '../../data/index.js';
import { openSqlite, type SqliteConfig, type SqliteSynchronous } from '../../data/sqlite/index.js';
import { SqlStreamStore, type SqlStreamStoreOptions } from './sql-store.js';

/**
 * A publish is acknowledged once its batch commits; `full` fsyncs that commit first, so an
 * acknowledged publish survives a power loss. Group commit pays one fsync per batch, not per
 * publish (docs/streams.md, Durability).
 */
export const STREAMS_DEFAULT_SYNCHRONOUS: SqliteSynchronous = 'full';

/** A stream store in `db` (tables created if missing). `close()` leaves the database open: it is the caller's. */
export function openStreams(db: Database, options: Omit<SqlStreamStoreOptions, 'ownsDatabase'> = {}): Promise<SqlStreamStore> {
  return new SqlStreamStore(db, options).open();
}

/** A stream store in a SQLite file of its own (`synchronous` default `full`); `close()` closes the file too. */
export async function openSqliteStreams(
  system: ActorRuntime,
  sqlite: SqliteConfig,
  options: Omit<SqlStreamStoreOptions, 'ownsDatabase'> = {},
): Promise<SqlStreamStore> {
  const db = await openSqlite(system, { name: options.name ?? 'streams', ...sqlite, synchronous: sqlite.synchronous ?? STREAMS_DEFAULT_SYNCHRONOUS });
  try {
    return await new SqlStreamStore(db, { ...options, ownsDatabase: true }).open();
  } catch (error) {
    await db.close();
    throw error;
  }
}
