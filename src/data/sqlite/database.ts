/**
 * A SQLite file as a `Database`: one writer thread and N reader threads, routed from the main thread.
 *
 * - `query`: a statement that reads (by its leading keyword, checked by SQLite on the reader, which
 *   refuses anything that writes) goes to the least busy free reader; everything else to the writer,
 *   through the single-writer gate. In WAL mode readers never block the writer nor it them: a read
 *   sees the last commit before it started.
 * - `transaction`: holds the gate and pins the writer from BEGIN IMMEDIATE to COMMIT (runTransaction;
 *   nested scopes are savepoints). SQLite transactions are serializable: the `isolation` option is
 *   accepted and ignored, as no level asked for is weaker than what SQLite gives. `readOnly` pins a
 *   free reader instead (BEGIN DEFERRED: one snapshot for the whole transaction), capped by maxReadMs.
 * - `stream`: a cursor pinned on a free reader (or, with none free, on the writer through the gate),
 *   capped by maxReadMs so that WAL checkpoints can always complete.
 * - `session`: the writer pinned through the gate for the function's duration.
 */
import { basename } from 'node:path';
import type { ActorRuntime, Ref } from '../../actors/index.js';
import type { DataContext } from '../context.js';
import type { Database, DatabaseHealth, ManyTotals, PreparedStatement, Queryable, QueryManyOptions, QueryOptions, StreamOptions, Transaction, TransactionOptions } from '../database.js';
import { ConnectionLost, SessionStateRefused, type DatabaseNotRouted } from '../errors.js';
import { otherDatabase } from '../tenants.js';
import { runTransaction, SQLITE_DIALECT, type TransactionDialect } from '../transaction.js';
import { inTransactionOf, refusedInOwnTransaction } from '../transaction-scope.js';
import type { Result, Row, Value } from '../values.js';
import { sqliteSessionStateOf } from './session-state.js';
import { TransportFailure, type WorkerChannel } from './channel.js';
import type { CheckpointScheduler } from './checkpoint.js';
import type { ResolvedSqliteConfig } from './config.js';
import { SqliteConnection } from './connection.js';
import { UNBOUND, type Binding, type Engine, type Reroute } from './engine.js';
import { NotReadonlyRefusal, withCallerStack, type StatementMode } from './faults.js';
import type { WriterGate } from './gate.js';
import type { CheckpointMode, CheckpointReply } from './protocol.js';
import { looksReadOnly } from './sql-text.js';
import { stopWorkers, type Supervision } from './supervision.js';
import type { SqliteStats, SqliteTelemetry } from './telemetry.js';

/** A read-only transaction takes no write lock: its snapshot starts at its first read. */
const READ_DIALECT: TransactionDialect = { begin: () => 'BEGIN DEFERRED' };
/** SQL texts whose route (reader or writer) is remembered; the map is cleared when full. */
const ROUTES_CAP = 4_096;
/** How long close() lets statements already sent finish. */
const CLOSE_DRAIN_MS = 5_000;

export interface ReaderSlot {
  readonly channel: WorkerChannel;
  /** A read transaction or cursor has it to itself. */
  pinned: boolean;
}

export interface SqliteParts {
  readonly system: ActorRuntime;
  readonly config: ResolvedSqliteConfig;
  readonly file: string;
  readonly engine: Engine;
  readonly writer: WorkerChannel;
  readonly readers: readonly ReaderSlot[];
  readonly gate: WriterGate;
  readonly checkpoints: CheckpointScheduler;
  readonly telemetry: SqliteTelemetry;
  readonly supervision: Supervision;
  readonly hosts: { readonly writer: string; readonly readers: readonly string[] };
  /** Frees the database's name once it is closed. */
  readonly release: () => void;
}

/** Transactions on the shared writer refuse what would outlive them on it (a setting PRAGMA, ATTACH, temp tables). */
const WRITER_DIALECT: TransactionDialect = {
  ...SQLITE_DIALECT,
  refuse: (sql) => {
    const stateful = sqliteSessionStateOf(sql);
    return stateful === undefined ? undefined : new SessionStateRefused(stateful, 'the shared SQLite writer after this transaction');
  },
};

export class SqliteDatabase implements Database {
  readonly backend = 'sqlite' as const;
  readonly name: string;
  /** The absolute path of the database file. */
  readonly file: string;
  /** Thread host names, for co-locating with (or finding) a worker. */
  readonly hosts: SqliteParts['hosts'];
  readonly #parts: SqliteParts;
  readonly #engine: Engine;
  readonly #writer: WorkerChannel;
  readonly #readers: readonly ReaderSlot[];
  readonly #gate: WriterGate;
  readonly #routes = new Map<string, boolean>();
  #nextLease = 1;
  #failure: unknown;
  #closing: Promise<void> | undefined;

  constructor(parts: SqliteParts) {
    this.#parts = parts;
    this.name = parts.config.name;
    this.file = parts.file;
    this.hosts = parts.hosts;
    this.#engine = parts.engine;
    this.#writer = parts.writer;
    this.#readers = parts.readers;
    this.#gate = parts.gate;
  }

  // ---- statements ----------------------------------------------------------------------------

  query<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: QueryOptions): Promise<Result<R>> {
    if (ctx?.database !== undefined) {
      const elsewhere = this.#elsewhere(ctx);
      if (elsewhere !== undefined) return Promise.reject(elsewhere);
    }
    // The engine's promise records a failure's caller stack itself (rejectAtCaller), at no cost until one fails.
    const reader = this.#readerFor(sql);
    if (reader !== undefined) return this.#engine.query<R>(reader.channel, UNBOUND, 'read', sql, params, ctx, options, this.#refused);
    return this.#write<R>(sql, params, ctx, options);
  }

  #write<R extends Row>(sql: string, params: readonly Value[] | undefined, ctx: DataContext | undefined, options: QueryOptions | undefined): Promise<Result<R>> {
    // State left on the shared writer would stay for every later caller (a PRAGMA, an ATTACH): db.session only.
    const stateful = sqliteSessionStateOf(sql);
    if (stateful !== undefined) return this.#engine.rejected(new SessionStateRefused(stateful, 'the shared SQLite writer'), this.#writer);
    // Inside this database's own transaction the writer is taken: it would wait for itself.
    const refused = this.#gate.held ? refusedInOwnTransaction(this, 'a write') : undefined;
    if (refused !== undefined) return this.#engine.rejected(refused, this.#writer);
    if (this.#gate.open) return this.#engine.query<R>(this.#writer, UNBOUND, 'autocommit', sql, params, ctx, options);
    const waiting = this.#gate.pass(ctx, () => this.#engine.query<R>(this.#writer, UNBOUND, 'autocommit', sql, params, ctx, options));
    return this.#engine.captureStacks ? withCallerStack(waiting) : waiting;
  }

  /** A reader refused the statement (it writes): remember, and send it to the writer. */
  readonly #refused: Reroute = (sql, params, ctx, options) => {
    this.#routes.set(sql, false);
    return this.#write(sql, params, ctx, options);
  };

  /** A free reader for `sql` when it only reads, the least busy one; undefined: the writer. */
  #readerFor(sql: string): ReaderSlot | undefined {
    const readers = this.#readers;
    if (readers.length === 0) return undefined;
    let reads = this.#routes.get(sql);
    if (reads === undefined) {
      reads = typeof sql === 'string' && looksReadOnly(sql);
      if (this.#routes.size >= ROUTES_CAP) this.#routes.clear();
      this.#routes.set(sql, reads);
    }
    if (!reads) return undefined;
    let best: ReaderSlot | undefined;
    for (let i = 0; i < readers.length; i++) {
      const reader = readers[i]!;
      if (reader.pinned || !reader.channel.attached) continue;
      if (best === undefined || reader.channel.pending < best.channel.pending) best = reader;
    }
    return best;
  }

  async prepare<R extends Row = Row>(sql: string, ctx?: DataContext): Promise<PreparedStatement<R>> {
    const reader = this.#readerFor(sql);
    const { statement, readonly } = await this.#engine.prepare<R>(
      reader?.channel ?? this.#writer,
      UNBOUND,
      sql,
      ctx,
      (text, params, queryCtx, options) => this.query<R>(text, params, queryCtx, options),
      (text) => this.#unprepare(text),
    );
    if (!readonly) this.#routes.set(sql, false);
    return statement;
  }

  async #unprepare(sql: string): Promise<void> {
    await Promise.all([this.#writer, ...this.#readers.map((reader) => reader.channel)].map((channel) => this.#engine.unprepare(channel, sql)));
  }

  stream<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: StreamOptions): AsyncIterable<R> {
    return this.#stream<R>(sql, params, ctx, options);
  }

  async *#stream<R extends Row>(sql: string, params: readonly Value[] | undefined, ctx: DataContext | undefined, options: StreamOptions | undefined): AsyncGenerator<R, void, undefined> {
    const elsewhere = this.#elsewhere(ctx);
    if (elsewhere !== undefined) throw elsewhere;
    if (this.#engine.closed) throw this.#engine.closedError();
    const reader = this.#readerFor(sql) === undefined ? undefined : this.#pinReader();
    if (reader !== undefined) {
      const binding = this.#readBinding(reader.channel);
      try {
        yield* this.#engine.stream<R>(reader.channel, binding, 'read', sql, params, ctx, options, true);
        return;
      } catch (error) {
        // Refused at open, before any row: it writes, so it belongs on the writer.
        if (!(error instanceof NotReadonlyRefusal)) throw error;
        this.#routes.set(sql, false);
      } finally {
        this.#unpin(reader, binding);
      }
    }
    yield* this.#streamOnWriter<R>(sql, params, ctx, options);
  }

  /**
   * A `ctx.database` naming another database than this one (its name, its file's path, or the file's
   * name without extension) is refused: without a tenant router it would run here.
   */
  #elsewhere(ctx: DataContext | undefined): DatabaseNotRouted | undefined {
    if (ctx?.database === undefined) return undefined;
    const base = basename(this.file);
    return otherDatabase(ctx, this.name, [this.file, base, base.replace(/\.[^.]*$/, '')]);
  }

  async ping(ctx?: DataContext): Promise<void> {
    const elsewhere = this.#elsewhere(ctx);
    if (elsewhere !== undefined) throw elsewhere;
    if (this.#failure !== undefined) throw new ConnectionLost(`sqlite ${this.name}: its supervisor gave up`);
    const channels = [this.#writer, ...this.#readers.filter((reader) => reader.channel.attached).map((reader) => reader.channel)];
    await Promise.all(channels.map((channel) => this.#engine.ping(channel, UNBOUND, ctx)));
  }

  // ---- pinned work ---------------------------------------------------------------------------

  transaction<T>(fn: (tx: Transaction) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const elsewhere = this.#elsewhere(options.ctx);
    if (elsewhere !== undefined) return Promise.reject(elsewhere);
    if (options.readOnly === true) {
      const reader = this.#pinReader();
      if (reader !== undefined) return this.#onReader(reader, (conn) => runTransaction(conn, READ_DIALECT, fn, options));
      return this.#onWriter(options.ctx, true, 'read', (conn) => runTransaction(conn, READ_DIALECT, (tx) => inTransactionOf(this, () => fn(tx)), options));
    }
    const refused = refusedInOwnTransaction(this, 'a write transaction');
    if (refused !== undefined) return Promise.reject(refused);
    return this.#onWriter(options.ctx, false, 'transaction', (conn) => runTransaction(conn, WRITER_DIALECT, (tx) => inTransactionOf(this, () => fn(tx)), options));
  }

  /** One transaction on the writer; the rows go to the worker together, answered through one promise. */
  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryManyOptions & { readonly results?: true }): Promise<Result<R>[]>;
  queryMany(sql: string, rows: readonly (readonly Value[])[], ctx: DataContext | undefined, options: QueryManyOptions & { readonly results: false }): Promise<ManyTotals>;
  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryManyOptions): Promise<Result<R>[] | ManyTotals> {
    const elsewhere = this.#elsewhere(ctx);
    if (elsewhere !== undefined) return Promise.reject(elsewhere);
    return this.#onWriter(ctx, false, 'transaction', (conn) => runTransaction(conn, SQLITE_DIALECT, () => conn.queryMany<R>(sql, rows, ctx, options), { ctx }));
  }

  session<T>(fn: (session: Queryable) => Promise<T>, ctx?: DataContext): Promise<T> {
    const elsewhere = this.#elsewhere(ctx);
    if (elsewhere !== undefined) return Promise.reject(elsewhere);
    const refused = refusedInOwnTransaction(this, 'a session');
    if (refused !== undefined) return Promise.reject(refused);
    return this.#onWriter(ctx, false, 'autocommit', async (conn) => {
      try {
        return await inTransactionOf(this, () => fn(conn));
      } finally {
        await this.#resetSession(conn);
      }
    });
  }

  /**
   * Puts the writer back as it was opened before the next caller gets it: a transaction the
   * session left open rolled back, Molo's pragmas set again (worker.ts), attached databases
   * detached, temporary tables, views and triggers dropped. A failure here is logged by nobody
   * and left to the worker: the statements are plain and the writer is the session's own.
   */
  async #resetSession(conn: SqliteConnection): Promise<void> {
    const config = this.#parts.config;
    const run = (sql: string): Promise<unknown> => conn.query(sql, undefined, undefined).catch(() => undefined);
    await run('ROLLBACK');
    await run('PRAGMA foreign_keys = ON');
    await run(`PRAGMA synchronous = ${config.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    await run(`PRAGMA busy_timeout = ${config.busyTimeoutMs}`);
    await run(`PRAGMA wal_autocheckpoint = ${config.walAutocheckpointPages}`);
    await run(`PRAGMA journal_size_limit = ${config.journalSizeLimitBytes}`);
    const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;
    const attached = await conn.query<{ name: string }>("SELECT name FROM pragma_database_list WHERE name NOT IN ('main', 'temp')", undefined, undefined).catch(() => undefined);
    for (const { name } of attached?.rows ?? []) await run(`DETACH DATABASE ${quote(name)}`);
    const temp = await conn.query<{ type: string; name: string }>("SELECT type, name FROM temp.sqlite_master WHERE type IN ('table', 'view', 'trigger') AND name NOT LIKE 'sqlite_%'", undefined, undefined).catch(() => undefined);
    for (const { type, name } of temp?.rows ?? []) await run(`DROP ${type.toUpperCase()} IF EXISTS temp.${quote(name)}`);
  }

  #pinReader(): ReaderSlot | undefined {
    let best: ReaderSlot | undefined;
    for (const reader of this.#readers) {
      if (reader.pinned || !reader.channel.attached) continue;
      if (best === undefined || reader.channel.pending < best.channel.pending) best = reader;
    }
    if (best !== undefined) best.pinned = true;
    return best;
  }

  /** A positive lease: a read, capped by maxReadMs in the worker. */
  #readBinding(channel: WorkerChannel): Binding {
    return { generation: channel.generation, lease: this.#nextLease++ };
  }

  #unpin(reader: ReaderSlot, binding: Binding): void {
    // In order before anything later on this reader: its cursors and transaction close first.
    this.#engine.endLease(reader.channel, binding);
    reader.pinned = false;
  }

  async #onReader<T>(reader: ReaderSlot, body: (conn: SqliteConnection) => Promise<T>): Promise<T> {
    const binding = this.#readBinding(reader.channel);
    try {
      return await body(new SqliteConnection(this.#engine, reader.channel, binding, 'read'));
    } finally {
      this.#unpin(reader, binding);
    }
  }

  /**
   * Holds the gate and pins the writer's current generation. Reads pinned here get a capped lease;
   * other pinned work a negative (uncapped) one, so that whatever it leaves open (a transaction a
   * session began, a cursor) is closed when it ends. `done` ends the lease and releases the gate.
   */
  async #pinWriter(ctx: DataContext | undefined, capped: boolean, mode: StatementMode): Promise<{ conn: SqliteConnection; done: () => void }> {
    if (this.#engine.closed) throw this.#engine.closedError();
    const release = await this.#gate.acquire(ctx);
    try {
      if (!this.#writer.attached && !(await this.#writer.whenAttached(this.#parts.config.acquireTimeoutMs))) {
        throw new ConnectionLost(`sqlite ${this.name}: the writer thread is not running`);
      }
    } catch (error) {
      release();
      throw error;
    }
    const lease = this.#nextLease++;
    const binding: Binding = { generation: this.#writer.generation, lease: capped ? lease : -lease };
    const done = (): void => {
      this.#engine.endLease(this.#writer, binding);
      release();
    };
    return { conn: new SqliteConnection(this.#engine, this.#writer, binding, mode), done };
  }

  async #onWriter<T>(ctx: DataContext | undefined, capped: boolean, mode: StatementMode, body: (conn: SqliteConnection) => Promise<T>): Promise<T> {
    const { conn, done } = await this.#pinWriter(ctx, capped, mode);
    try {
      return await body(conn);
    } finally {
      done();
    }
  }

  /** A cursor on the writer: the gate is held for as long as the caller iterates. */
  async *#streamOnWriter<R extends Row>(sql: string, params: readonly Value[] | undefined, ctx: DataContext | undefined, options: StreamOptions | undefined): AsyncGenerator<R, void, undefined> {
    const mode: StatementMode = looksReadOnly(sql) ? 'read' : 'autocommit';
    const { conn, done } = await this.#pinWriter(ctx, mode === 'read', mode);
    try {
      yield* conn.stream<R>(sql, params, ctx, options);
    } finally {
      done();
    }
  }

  // ---- maintenance ---------------------------------------------------------------------------

  /** Runs a WAL checkpoint now, waiting for the writer like a transaction does. */
  async checkpoint(mode: CheckpointMode = 'TRUNCATE', ctx?: DataContext): Promise<CheckpointReply> {
    if (this.#engine.closed) throw this.#engine.closedError();
    const release = await this.#gate.acquire(ctx);
    try {
      return await this.#parts.checkpoints.run(mode);
    } finally {
      release();
    }
  }

  stats(): SqliteStats {
    return this.#parts.telemetry.stats();
  }

  health(): DatabaseHealth {
    const channels = [this.#writer, ...this.#readers.map((reader) => reader.channel)];
    const connections = channels.filter((channel) => channel.attached).length;
    const idle = channels.filter((channel) => channel.attached && channel.pending === 0).length - this.#readers.filter((reader) => reader.pinned).length;
    const reason =
      this.#closing !== undefined
        ? 'closed'
        : this.#failure !== undefined
          ? `its supervisor gave up after ${this.#parts.config.maxRestarts} thread restarts`
          : !this.#writer.attached
            ? 'the writer thread is restarting'
            : undefined;
    return { healthy: reason === undefined, ...(reason === undefined ? {} : { reason }), connections, idle: Math.max(0, idle), waiting: this.#gate.waiting };
  }

  /** The supervisor of this database's threads (`molo.sqlite.<name>`; a new one after an application's tree restarted it). */
  get supervisor(): Ref {
    return this.#parts.supervision.supervisor;
  }

  /** The supervisor gave up (too many thread restarts): everything fails until close. */
  failed(reason: unknown): void {
    this.#failure = reason ?? 'gave up';
    this.#parts.telemetry.gaveUp(reason);
    const why = `sqlite ${this.name}: its threads kept dying and their supervisor gave up (${this.#parts.config.maxRestarts} restarts in 10 s)`;
    this.#engine.fail(why);
    this.#gate.close(() => this.#engine.closedError());
    const failure = new TransportFailure('lost', why, reason);
    for (const channel of [this.#writer, ...this.#readers.map((reader) => reader.channel)]) channel.close(failure);
  }

  /** When a commit reaches the disk (PRAGMA synchronous on the writer; config.ts). */
  get synchronous(): ResolvedSqliteConfig['synchronous'] {
    return this.#parts.config.synchronous;
  }

  /** Closes every handle (the last one checkpoints the WAL away) and stops the threads; removes no file. */
  close(): Promise<void> {
    return (this.#closing ??= this.#close());
  }

  async #close(): Promise<void> {
    const { system, supervision } = this.#parts;
    // The checkpoint actor sees the engine closed from here on, and stops with the supervisor below.
    this.#engine.close();
    this.#gate.close();
    const channels = [this.#writer, ...this.#readers.map((reader) => reader.channel)];
    await Promise.all(channels.map((channel) => channel.drained(CLOSE_DRAIN_MS)));
    const failure = new TransportFailure('closed', `sqlite ${this.name} is closed`);
    for (const channel of channels) channel.close(failure);
    await stopWorkers(system, supervision);
    this.#parts.release();
  }
}
