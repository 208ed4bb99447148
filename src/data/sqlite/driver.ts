/**
 * better-sqlite3 is a dependency of molo (the embedded default store), yet it can be missing: left
 * out of a bundle or a pruned install. It is loaded only inside the writer and
 * reader threads, so programs that never open SQLite never load it; this check, on the main thread
 * before any thread starts, turns its absence into one typed error naming the package instead of a
 * thread that dies at start.
 */
import { createRequire } from 'node:module';
import { SqliteDriverMissing, type RedactedConnection } from '../errors.js';

/** Resolves `better-sqlite3` from molo's own location, as the threads will; throws SqliteDriverMissing when absent. */
export function checkSqliteDriver(connection: RedactedConnection, packageName = 'better-sqlite3'): void {
  try {
    createRequire(import.meta.url).resolve(packageName);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new SqliteDriverMissing({ connection, cause: error });
  }
}
