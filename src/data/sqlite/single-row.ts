/**
 * Which reads can return at most one row, so the executor runs them with `get()` (one native call)
 * rather than an iterator (several µs a call more: a third of a point select's cost).
 *
 * Decided from the statement's VDBE program (`EXPLAIN`), once per statement and schema version:
 * exactly one ResultRow and no instruction that can run it twice — no cursor loop (Next, Prev,
 * Rewind, sorter and virtual-table steps), no subroutine or coroutine, and no Goto but the one
 * every program ends with, back to its start after opening the transaction. Plans alone do not
 * tell: `id IN (?, ?)` and `id = ? OR id = ?` show the same "SEARCH … (rowid=?)" as `id = ?`.
 */
import type Database from 'better-sqlite3';
import type { SqliteParam } from './protocol.js';

const LOOPING = new Set([
  'Next',
  'Prev',
  'Rewind',
  'Last',
  'SorterNext',
  'SorterSort',
  'Sort',
  'VFilter',
  'VNext',
  'RowSetRead',
  'RowSetTest',
  'Gosub',
  'Return',
  'Yield',
  'InitCoroutine',
  'EndCoroutine',
]);

interface Instruction {
  readonly opcode: string;
  readonly p2: number;
}

/** Whether `program` (EXPLAIN's rows) runs its one ResultRow at most once. */
export function runsResultRowOnce(program: readonly Instruction[]): boolean {
  let results = 0;
  for (const { opcode, p2 } of program) {
    if (opcode === 'ResultRow') results++;
    else if (LOOPING.has(opcode)) return false;
    else if (opcode === 'Goto' && p2 !== 1) return false;
  }
  return results === 1;
}

export class SingleRowPlans {
  #schema: number | bigint | undefined;
  #schemaVersion: Database.Statement | undefined;
  #touch: Database.Statement | undefined;

  constructor(readonly db: Database.Database) {}

  /**
   * Whether the schema version differs from the last call's (true on the first call). On a change
   * the connection reloads its schema, so that statements prepared next compile against it.
   */
  schemaChanged(): boolean {
    this.#schemaVersion ??= this.db.prepare('PRAGMA schema_version').pluck();
    const version = this.#schemaVersion.get() as number | bigint;
    if (version === this.#schema) return false;
    this.#schema = version;
    // PRAGMA reads the cookie without reloading; a read of the schema table notices the new cookie.
    this.#touch ??= this.db.prepare('SELECT 1 FROM sqlite_schema LIMIT 1').pluck();
    this.#touch.get();
    return true;
  }

  /** Whether `stmt` returns at most one row; `args` as its `all()` takes them (EXPLAIN binds the same parameters). */
  atMostOneRow(stmt: Database.Statement, args: SqliteParam[] | [Record<string, SqliteParam>]): boolean {
    try {
      const explain = this.db.prepare(`EXPLAIN ${stmt.source}`);
      explain.safeIntegers(false);
      return runsResultRowOnce(explain.all(...args) as Instruction[]);
    } catch {
      return false;
    }
  }
}
