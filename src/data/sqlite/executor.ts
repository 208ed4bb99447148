/**
 * The worker's statement runner: prepared statements cached by SQL text (LRU), results sized against
 * the reply budget (rows that do not fit are parked and fetched with Op.More), cursors for
 * `stream()`, SQLITE_BUSY retried a few times with backoff, and WAL checkpoints.
 */
import type Database from 'better-sqlite3';
import { exponentialBackoff } from '../../actors/backoff.js';
import { commandOf, countsChanges, insertsRows } from './sql-text.js';
import { Args } from './args.js';
import { blobs, exactRowBytes, fromInteger, settleRow } from './rows.js';
import { SharedRead } from './shared-read.js';
import { SingleRowPlans } from './single-row.js';
import { LruCache } from './statement-cache.js';
import {
  Fault,
  type CheckpointMode,
  type CheckpointReply,
  type FaultReply,
  type MoreReply,
  type ParkedRows,
  type PrepareReply,
  type SqliteParam,
  type StreamReply,
  type WorkerOptions,
} from './protocol.js';

export interface CachedStatement {
  readonly stmt: Database.Statement;
  /** Parameters written `$1`, `?1`, `:1`: better-sqlite3 binds those by name, so the values go as { 1: v1, ... }. */
  numbered: boolean;
  readonly readonly: boolean;
  readonly reader: boolean;
  readonly command: string;
  readonly columns: readonly string[] | undefined;
  readonly counts: boolean;
  readonly inserts: boolean;
  /**
   * A read that can return at most one row (single-row.ts), run with `get()`: better-sqlite3's
   * iterator costs several µs a call more. Undefined until its first run; reset when the schema changes.
   */
  single: boolean | undefined;
}

interface OpenStream {
  readonly iterator: IterableIterator<Record<string, unknown>>;
  readonly columns: readonly string[];
  readonly lease: number;
}

interface Parked {
  rows: Record<string, unknown>[];
  offset: number;
  readonly columns: readonly string[];
  readonly at: number;
}

/** Parked results at most; past it (or past maxReadMs unfetched: their caller gave up) the oldest go. */
const MAX_PARKED = 4_096;

const RETURNING_CHANGES = 'SELECT changes() AS a, last_insert_rowid() AS i';
/** First backoff between SQLITE_BUSY retries; doubles per retry. */
const BUSY_BACKOFF_MS = 10;
/** No pause between busy retries is longer (the deadline bounds the total). */
const BUSY_BACKOFF_CAP_MS = 1_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

class TooManyRowsSignal {
  constructor(readonly maxRows: number) {}
}

export class Executor {
  readonly #statements: LruCache<string, CachedStatement>;
  readonly #singleRows: SingleRowPlans;
  /** Readers only: the batch's unpinned reads share one read transaction. */
  readonly #shared: SharedRead | undefined;
  /**
   * Whether the schema version was checked since the batch began, its read snapshot moved or a
   * statement that may change the schema ran: cached statements hold their column names and plans.
   */
  #schemaChecked = false;
  readonly #streams = new Map<number, OpenStream>();
  readonly #parked = new Map<number, Parked>();
  #nextId = 1;
  /** Bytes left in the current batch's reply. */
  #budget = 0;
  #changes: Database.Statement | undefined;
  #texts: readonly string[] = [];
  #slots: (CachedStatement | undefined)[] = [];
  /** The last statement's affected rows and insert rowid. */
  affected = 0;
  lastInsertId: number | bigint | null = null;

  constructor(
    readonly db: Database.Database,
    readonly options: WorkerOptions,
  ) {
    this.#statements = new LruCache(options.statementCacheSize);
    this.#singleRows = new SingleRowPlans(db);
    this.#shared = options.role === 'reader' ? new SharedRead(db) : undefined;
  }

  /** Before an unpinned statement: on a reader, it runs in the batch's shared read transaction. */
  shareRead(): void {
    // A new snapshot may see a new schema: the single-row check asks again.
    if (this.#shared?.enter(Date.now()) === true) this.#schemaChecked = false;
  }

  /** Before any other op, and at the end of a batch: the shared read transaction, if any, ends. */
  endSharedRead(): void {
    this.#shared?.leave();
  }

  /** A new batch: its reply budget, and its SQL texts (each compiled, or found in the cache, once). */
  startBatch(texts: readonly string[]): void {
    this.#budget = this.options.replyBudgetBytes;
    this.#schemaChecked = false;
    this.#texts = texts;
    this.#slots = new Array(texts.length);
    if (this.#parked.size > 0) this.#purgeParked();
  }

  /**
   * A new schema version drops every cached statement: SQLite re-prepares a stale one when it runs,
   * but the columns and single-row plan cached beside it would be the old schema's.
   */
  #checkSchema(): void {
    this.#schemaChecked = true;
    if (!this.#singleRows.schemaChanged()) return;
    this.#statements.clear();
    this.#slots.fill(undefined);
  }

  #purgeParked(): void {
    const stale = Date.now() - this.options.maxReadMs;
    for (const [id, parked] of this.#parked) {
      if (parked.at < stale || this.#parked.size > MAX_PARKED) this.#parked.delete(id);
    }
  }

  /** The statement in SQL slot `slot` of this batch. */
  statementAt(slot: number): CachedStatement {
    if (!this.#schemaChecked) this.#checkSchema();
    return (this.#slots[slot] ??= this.#statement(this.#texts[slot]!));
  }

  /** The cached statement for `sql`, compiled on first use. */
  statementFor(sql: string): CachedStatement {
    if (!this.#schemaChecked) this.#checkSchema();
    return this.#statement(sql);
  }

  #statement(sql: string): CachedStatement {
    let entry = this.#statements.get(sql);
    if (entry === undefined) {
      const stmt = this.db.prepare(sql);
      const command = commandOf(sql, stmt.readonly);
      entry = {
        stmt,
        numbered: false,
        readonly: stmt.readonly,
        reader: stmt.reader,
        command,
        columns: stmt.reader ? stmt.columns().map((column) => column.name) : undefined,
        counts: countsChanges(command),
        inserts: insertsRows(command),
        single: undefined,
      };
      this.#statements.set(sql, entry);
    }
    return entry;
  }

  #refuseWrite(readonly: boolean): FaultReply | undefined {
    if (readonly || this.options.role === 'writer') return undefined;
    return { e: 'statement writes; a reader only reads', x: Fault.NotReadonly };
  }

  /**
   * Runs a statement with its `count` parameters from `params[first]` on. Its affected count and
   * insert id are left in `affected` and `lastInsertId`; returns its rows (or where they were
   * parked), a fault, or undefined for a statement that returns no rows.
   */
  query(entry: CachedStatement, params: readonly SqliteParam[], first: number, count: number, maxRows: number, deadline: number): unknown {
    this.affected = 0;
    this.lastInsertId = null;
    if (Date.now() > deadline) return timedOut();
    const refused = this.#refuseWrite(entry.readonly);
    if (refused !== undefined) return refused;
    // A write other than DML may change the schema (DDL): the next statement checks it again.
    if (!entry.readonly && !entry.counts) this.#schemaChecked = false;
    const args = new Args(params, first, count);
    for (let attempt = 0; ; attempt++) {
      try {
        return this.#bindAndExecute(entry, args, maxRows);
      } catch (error) {
        const busy = this.#busyFault(error, attempt, deadline);
        if (busy !== undefined) return busy;
      }
    }
  }

  #bindAndExecute(entry: CachedStatement, args: Args, maxRows: number): unknown {
    if (args.count === 0 || entry.numbered) return this.#execute(entry, args, maxRows);
    try {
      return this.#execute(entry, args, maxRows);
    } catch (error) {
      // Binding fails before anything runs, so trying the other way is safe; remembered per statement.
      if (!isNumberedMismatch(error)) throw error;
      entry.numbered = true;
      return this.#execute(entry, args, maxRows);
    }
  }

  #execute(entry: CachedStatement, args: Args, maxRows: number): unknown {
    const { stmt } = entry;
    if (!entry.reader) {
      const info = args.run(stmt, entry.numbered);
      if (entry.counts) this.affected = info.changes;
      if (entry.inserts) this.lastInsertId = fromInteger(info.lastInsertRowid);
      return undefined;
    }
    const columns = entry.columns!;
    let rows: Record<string, unknown>[];
    if (entry.readonly) {
      if (entry.single === true) {
        const row = args.get(stmt, entry.numbered) as Record<string, unknown> | undefined;
        rows = row === undefined ? [] : [row];
      } else {
        rows = collect(args.iterate(stmt, entry.numbered), maxRows);
        // Decided after a real run: running it made the connection load the current schema, which
        // EXPLAIN (compiled, never run) would not notice on its own.
        entry.single ??= this.#singleRows.atMostOneRow(stmt, args.bound(entry.numbered));
      }
      if (rows.length > maxRows) throw new TooManyRowsSignal(maxRows);
    } else {
      // A write with RETURNING makes all its changes at the first step: run it in a savepoint, so
      // that one over maxRows is undone rather than applied and then reported as failed.
      const run = (): Record<string, unknown>[] => {
        const all = collect(args.iterate(stmt, entry.numbered), maxRows);
        if (all.length > maxRows) throw new TooManyRowsSignal(maxRows);
        this.#changes ??= this.db.prepare(RETURNING_CHANGES);
        const counted = this.#changes.get() as { a: bigint; i: bigint };
        if (entry.counts) this.affected = Number(counted.a);
        if (entry.inserts) this.lastInsertId = fromInteger(counted.i);
        return all;
      };
      rows = this.db.inTransaction ? this.db.transaction(run)() : this.db.transaction(run).immediate();
    }
    return this.#fitRows(rows, columns);
  }

  /** Rows that fit the reply budget go as they are; more are parked for Op.More. */
  #fitRows(rows: Record<string, unknown>[], columns: readonly string[]): Record<string, unknown>[] | ParkedRows | FaultReply {
    let bytes = 0;
    for (let i = 0; i < rows.length; i++) bytes += settleRow(rows[i]!, columns);
    if (bytes <= this.#budget) {
      this.#budget -= bytes;
      return rows;
    }
    const tooLarge = this.#oversizedRow(rows, columns);
    if (tooLarge !== undefined) return tooLarge;
    const id = this.#nextId++;
    this.#parked.set(id, { rows, offset: 0, columns, at: Date.now() });
    return { parked: id };
  }

  #oversizedRow(rows: readonly Record<string, unknown>[], columns: readonly string[]): FaultReply | undefined {
    const cap = this.options.replyBudgetBytes;
    for (const row of rows) {
      const size = exactRowBytes(row, columns);
      if (size > cap) return { e: `a row of ${size} bytes`, x: Fault.RowTooLarge, n: size };
    }
    return undefined;
  }

  /** The next slice of a parked result: as many rows as fit (at least one). */
  more(id: number): MoreReply | FaultReply {
    const parked = this.#parked.get(id);
    if (parked === undefined) return { e: `no parked result ${id}`, x: Fault.Gone };
    const { rows, columns } = parked;
    blobs.seen = false;
    const budget = Math.max(0, this.#budget);
    let end = parked.offset;
    let bytes = 0;
    while (end < rows.length) {
      const size = settleRow(rows[end]!, columns);
      if (end > parked.offset && bytes + size > budget) break;
      bytes += size;
      end++;
    }
    this.#budget -= bytes;
    const slice = rows.slice(parked.offset, end);
    parked.offset = end;
    const z = blobs.seen || undefined;
    if (end >= rows.length) {
      this.#parked.delete(id);
      return { r: slice, z };
    }
    return { r: slice, p: id, z };
  }

  prepare(sql: string): PrepareReply | FaultReply {
    const entry = this.#statement(sql);
    return { o: entry.readonly, f: entry.columns ?? [] };
  }

  unprepare(sql: string): void {
    this.#statements.delete(sql);
  }

  streamOpen(sql: string, params: readonly SqliteParam[] | undefined, batchSize: number, deadline: number, lease: number): StreamReply | FaultReply {
    if (Date.now() > deadline) return timedOut();
    // Its own statement, not the cached one: a cursor keeps its statement busy until it closes.
    const stmt = this.db.prepare(sql);
    const refused = this.#refuseWrite(stmt.readonly);
    if (refused !== undefined) return refused;
    if (!stmt.reader) return { e: 'stream() needs a statement that returns rows', x: Fault.Sqlite };
    const args = new Args(params ?? [], 0, params?.length ?? 0);
    const iterator = this.#retryBusy(deadline, () => {
      try {
        return args.iterate(stmt, false);
      } catch (error) {
        if (args.count === 0 || !isNumberedMismatch(error)) throw error;
        return args.iterate(stmt, true);
      }
    }) as IterableIterator<Record<string, unknown>>;
    const id = this.#nextId++;
    this.#streams.set(id, { iterator, columns: stmt.columns().map((column) => column.name), lease });
    return this.streamNext(id, batchSize, deadline);
  }

  streamNext(id: number, batchSize: number, deadline: number): StreamReply | FaultReply {
    const stream = this.#streams.get(id);
    if (stream === undefined) return { e: `stream ${id} is closed`, x: Fault.Gone };
    if (Date.now() > deadline) {
      this.streamClose(id);
      return timedOut();
    }
    const rows: Record<string, unknown>[] = [];
    const budget = Math.max(0, this.#budget);
    let bytes = 0;
    let done = false;
    blobs.seen = false;
    while (rows.length < batchSize && (rows.length === 0 || bytes < budget)) {
      let next: IteratorResult<Record<string, unknown>>;
      try {
        next = stream.iterator.next();
      } catch (error) {
        // A cursor that failed is over: close it here, the caller sees the fault.
        this.streamClose(id);
        throw error;
      }
      if (next.done === true) {
        done = true;
        break;
      }
      const row = next.value;
      const size = settleRow(row, stream.columns);
      if (size > this.options.replyBudgetBytes && exactRowBytes(row, stream.columns) > this.options.replyBudgetBytes) {
        this.streamClose(id);
        return { e: `a row of ${exactRowBytes(row, stream.columns)} bytes`, x: Fault.RowTooLarge, n: exactRowBytes(row, stream.columns) };
      }
      bytes += size;
      rows.push(row);
    }
    this.#budget -= bytes;
    if (done) this.streamClose(id);
    return { s: id, r: rows, d: done, z: blobs.seen || undefined };
  }

  streamClose(id: number): void {
    const stream = this.#streams.get(id);
    if (stream === undefined) return;
    this.#streams.delete(id);
    stream.iterator.return?.();
  }

  /** A pinned read ended (or hit the read cap): close its cursors and its transaction. */
  releaseLease(lease: number): void {
    for (const [id, stream] of this.#streams) if (stream.lease === lease) this.streamClose(id);
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
  }

  /**
   * `PRAGMA wal_checkpoint(mode)` with a short busy timeout of its own: a RESTART or TRUNCATE waits
   * for readers, and the writer must not stall behind one for the whole busy_timeout.
   */
  checkpoint(mode: CheckpointMode, busyTimeoutMs: number): CheckpointReply | FaultReply {
    if (this.db.inTransaction) return { e: 'cannot checkpoint inside a transaction', x: Fault.Sqlite, k: 'SQLITE_LOCKED' };
    this.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    try {
      const row = (this.db.pragma(`wal_checkpoint(${mode})`) as Record<string, bigint | number>[])[0]!;
      return { busy: Number(row.busy), log: Number(row.log), checkpointed: Number(row.checkpointed) };
    } finally {
      this.db.pragma(`busy_timeout = ${this.options.busyTimeoutMs}`);
    }
  }

  closeAll(): void {
    for (const id of [...this.#streams.keys()]) this.streamClose(id);
    this.#parked.clear();
    this.#statements.clear();
  }

  /**
   * SQLITE_BUSY outlasted busy_timeout: try again a few times with a growing pause (the thread has
   * nothing else to do meanwhile: it is this handle's only user), never past the op's deadline.
   */
  #retryBusy<T>(deadline: number, run: () => T): T | FaultReply {
    for (let attempt = 0; ; attempt++) {
      try {
        return run();
      } catch (error) {
        const busy = this.#busyFault(error, attempt, deadline);
        if (busy !== undefined) return busy;
      }
    }
  }

  /**
   * After a failed attempt: rethrows anything but SQLITE_BUSY; for BUSY, pauses and returns
   * undefined (try again), or returns the fault once the retries or the deadline are used up.
   */
  #busyFault(error: unknown, attempt: number, deadline: number): FaultReply | undefined {
    if (!isBusy(error)) throw error;
    const pause = exponentialBackoff({ baseMs: BUSY_BACKOFF_MS, capMs: BUSY_BACKOFF_CAP_MS }, attempt);
    if (attempt >= this.options.busyRetries || Date.now() + pause > deadline) {
      const { message, code } = error as Error & { code: string };
      return { e: `${message} (${attempt + 1} attempts, busy_timeout ${this.options.busyTimeoutMs} ms)`, x: Fault.Busy, k: code, n: attempt + 1 };
    }
    Atomics.wait(sleeper, 0, 0, pause);
    return undefined;
  }

  /** An op's failure as its reply. */
  fault(error: unknown): FaultReply {
    if (error instanceof TooManyRowsSignal) return { e: 'too many rows', x: Fault.TooManyRows, n: error.maxRows };
    if (error instanceof Error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('SQLITE_')) return { e: error.message, x: Fault.Sqlite, k: code };
      // better-sqlite3's own checks (parameter count, more than one statement, a busy connection)
      // are TypeErrors and RangeErrors: no SQLite code to report.
      return { e: error.message, x: Fault.Sqlite };
    }
    return { e: String(error), x: Fault.Internal };
  }
}

function isNumberedMismatch(error: unknown): boolean {
  return error instanceof RangeError && error.message.startsWith('Too many parameter values');
}

function collect(iterator: IterableIterator<unknown>, maxRows: number): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const row of iterator) {
    rows.push(row as Record<string, unknown>);
    // One past the cap is enough to know it is over; breaking out closes the cursor.
    if (rows.length > maxRows) break;
  }
  return rows;
}

export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

function timedOut(): FaultReply {
  return { e: 'the deadline passed before the statement ran', x: Fault.Timeout };
}
