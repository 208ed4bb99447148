/**
 * Opening a stream store. SQLite has one writer per file, shared by everything in it, so by default
 * a stream store gets a file of its own (`openSqliteStreams`); `openStreams(db)` puts it in a
 * database the caller already has (the app's SQLite file, or a Postgres pool shared by instances).
 */
import type { ActorRuntime } from '../../actors/index.js';
import type { Database } from '../../data/index.js';
import { openSqlite, type SqliteConfig } from '../../data/sqlite/index.js';
import { SqlStreamStore, type SqlStreamStoreOptions } from './sql-store.js';

/** A stream store in `db` (tables created if missing). `close()` leaves the database open: it is the caller's. */
export function openStreams(db: Database, options: Omit<SqlStreamStoreOptions, 'ownsDatabase'> = {}): Promise<SqlStreamStore> {
  return new SqlStreamStore(db, options).open();
}

/** A stream store in a SQLite file of its own; `close()` closes the file too. */
export async function openSqliteStreams(
  system: ActorRuntime,
  sqlite: SqliteConfig,
  options: Omit<SqlStreamStoreOptions, 'ownsDatabase'> = {},
): Promise<SqlStreamStore> {
  const db = await openSqlite(system, { name: options.name ?? 'streams', ...sqlite });
  try {
    return await new SqlStreamStore(db, { ...options, ownsDatabase: true }).open();
  } catch (error) {
    await db.close();
    throw error;
  }
}
