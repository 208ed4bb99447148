/**
 * One read transaction for the unpinned reads of a batch on a reader. In WAL mode each statement
 * outside a transaction opens and closes a read transaction of its own (shared-memory locks, a
 * look at the WAL index): for a point select that is most of its cost, and the single-row check's
 * `PRAGMA schema_version` paid it a second time. Reads in one batch were issued together, before
 * the batch left the main thread, so one snapshot for all of them is one of the orders they could
 * have run in: each still sees every write acknowledged before it was issued.
 *
 * The snapshot is renewed once it is MAX_SHARED_MS old, so that a batch of long reads never holds
 * back WAL checkpoints for long; it is closed before any other op (a pinned read, a cursor, a
 * checkpoint) and at the end of the batch.
 */
import type Database from 'better-sqlite3';

const MAX_SHARED_MS = 50;

export class SharedRead {
  #open = false;
  #since = 0;
  #begin: Database.Statement | undefined;
  #commit: Database.Statement | undefined;

  constructor(readonly db: Database.Database) {}

  /**
   * Before an unpinned read: opens the shared transaction unless one is open (and young enough)
   * or the handle is in a transaction of its own. Returns true when it opened a new one.
   */
  enter(now: number): boolean {
    if (this.#open) {
      if (now - this.#since <= MAX_SHARED_MS && this.db.inTransaction) return false;
      this.leave();
    }
    if (this.db.inTransaction) return false;
    (this.#begin ??= this.db.prepare('BEGIN')).run();
    this.#open = true;
    this.#since = now;
    return true;
  }

  /** Closes the shared transaction, if one is open. */
  leave(): void {
    if (!this.#open) return;
    this.#open = false;
    if (!this.db.inTransaction) return; // SQLite ended it itself (an I/O error rolls back)
    try {
      (this.#commit ??= this.db.prepare('COMMIT')).run();
    } catch {
      // Ending a read cannot lose anything; a handle left in a transaction would pin its snapshot.
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
    }
  }
}
