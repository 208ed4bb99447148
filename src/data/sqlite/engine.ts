/**
 * Statements on one worker channel: the hot path every query takes (encode, queue, take the
 * batch's reply, build the result), prepared statements, cursors for `stream()`, and the typed
 * errors for whatever went wrong. Routing (which worker) and pinning (which transaction) are the
 * callers' business: the database and its connections.
 */
import { DEFAULT_STATEMENT_TIMEOUT_MS, remainingMs, type DataContext } from '../context.js';
import { DEFAULT_MAX_ROWS, type ManyTotals, type PreparedStatement, type QueryManyOptions, type QueryOptions, type StreamOptions } from '../database.js';
import { ConnectionLost, DbError, InvalidDataConfig, PoolClosed } from '../errors.js';
import type { Result, Row, Value } from '../values.js';
import { TransportFailure, type Request, type WorkerChannel } from './channel.js';
import { CALLER_STACK_PENDING_LIMIT, FaultMapper, rejectAtCaller, type FailureSite, type StatementMode } from './faults.js';
import { Fault, isFault, NO_LEASE, Op, type MoreReply, type OpReply, type ParkedRows, type PrepareReply, type ReplyFrame, type StreamReply } from './protocol.js';
import { FieldsCache, NO_FIELDS, result } from './result.js';
import { queueMany } from './query-many.js';
import { restoreBlobs } from './rows.js';

/** What a pinned connection is bound to: a worker generation (0: any) and a lease (0: none). */
export interface Binding {
  readonly generation: number;
  readonly lease: number;
}

/** Runs a statement elsewhere (a reader's refused write, on the writer). */
export type Reroute = (sql: string, params: readonly Value[] | undefined, ctx: DataContext | undefined, options: QueryOptions) => Promise<Result>;

export const UNBOUND: Binding = Object.freeze({ generation: 0, lease: NO_LEASE });

export const DEFAULT_STREAM_BATCH = 1_000;
export const MAX_STREAM_BATCH = 100_000;
export const MAX_ROWS_CAP = 10_000_000;

/** Bytes of framing per op beyond its SQL and parameters. */
const OP_BYTES = 32;

export class Engine {
  #closed = false;
  /** Set when the threads are gone for good (their supervisor gave up): why, for ConnectionLost. */
  #failure: string | undefined;
  /** Statements' fields by SQL text, shared by their results while their columns stay the same. */
  readonly fields = new FieldsCache();

  constructor(
    readonly faults: FaultMapper,
    /** Whether statements record the caller's frames in a failure's `callerStack` (at a failure's cost only). */
    readonly captureStacks: boolean,
  ) {}

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    this.#closed = true;
  }

  /** Everything fails from now on with ConnectionLost(`why`), not PoolClosed: nobody closed it. */
  fail(why: string): void {
    this.#failure = why;
    this.#closed = true;
  }

  /** The error for a call made after close() or fail(). */
  closedError(): DbError {
    return this.#failure === undefined ? new PoolClosed() : new ConnectionLost(this.#failure);
  }

  /** A statement's failure before it was queued, with the caller's stack recorded as a statement's own failure would be. */
  rejected(error: unknown, channel: WorkerChannel): Promise<never> {
    return this.#stacks(channel) && error instanceof DbError && error.callerStack === undefined ? rejectAtCaller(error) : Promise.reject(error);
  }

  /** Whether a statement queued on `channel` now records a failure's caller stack. */
  #stacks(channel: WorkerChannel): boolean {
    return this.captureStacks && channel.pending <= CALLER_STACK_PENDING_LIMIT;
  }

  /** Queues an op other than a statement; resolves with its reply, rejects with a TransportFailure (or QueueFull). */
  op(channel: WorkerChannel, kind: number, args: unknown[], deadline: number, generation: number, lease = NO_LEASE): Promise<OpReply> {
    return new Promise<OpReply>((resolve, reject) => {
      let bytes = OP_BYTES;
      for (const arg of args) bytes += typeof arg === 'string' ? 5 + arg.length * 3 : 9;
      channel.op(new OpRequest(generation, resolve, reject), kind, args, bytes, deadline, lease);
    });
  }

  /**
   * Runs one statement on `channel`; the hot path. No async function and one promise per
   * statement: 100,000 concurrent inserts keep all of theirs alive at once.
   */
  query<R extends Row = Row>(
    channel: WorkerChannel,
    binding: Binding,
    mode: StatementMode,
    sql: string,
    params: readonly Value[] | undefined,
    ctx: DataContext | undefined,
    options: QueryOptions | undefined,
    /** For a read sent to a reader: where it goes instead if the reader finds that it writes. */
    refused?: Reroute,
  ): Promise<Result<R>> {
    let request: QueryRequest;
    try {
      if (this.#closed) throw this.closedError();
      if (typeof sql !== 'string') throw new InvalidDataConfig('sql', 'must be a string');
      const timeoutMs = ctx === undefined ? DEFAULT_STATEMENT_TIMEOUT_MS : remainingMs(ctx);
      request = new QueryRequest(this, channel, binding, mode, sql, params, ctx, timeoutMs, resolveMaxRows(options), refused, this.#stacks(channel));
    } catch (error) {
      return this.rejected(error, channel);
    }
    // One shared executor function rather than a closure per statement.
    issuing = request;
    return new Promise<Result<R>>(issue as (resolve: (result: Result<R>) => void, reject: (error: unknown) => void) => void);
  }

  /**
   * Runs `sql` once per row of `rows` on `channel`, with one request and one promise for them all:
   * the rows go in packed chunks, in order (query-many.ts), and the promise settles once every row
   * is answered, or with the first failure.
   */
  queryMany<R extends Row = Row>(
    channel: WorkerChannel,
    binding: Binding,
    mode: StatementMode,
    sql: string,
    rows: readonly (readonly Value[])[],
    ctx: DataContext | undefined,
    options: QueryManyOptions | undefined,
  ): Promise<Result<R>[] | ManyTotals> {
    const totals = options?.results === false;
    return new Promise<Result<R>[] | ManyTotals>((resolve, reject) => {
      if (this.#closed) return reject(this.closedError());
      if (typeof sql !== 'string') return reject(new InvalidDataConfig('sql', 'must be a string'));
      if (rows.length === 0) return resolve(totals ? { count: 0, affected: 0 } : []);
      try {
        const timeoutMs = ctx === undefined ? DEFAULT_STATEMENT_TIMEOUT_MS : remainingMs(ctx);
        const target = { channel, generation: binding.generation, lease: binding.lease, mode };
        queueMany(this, target, sql, rows, ctx, timeoutMs, resolveMaxRows(options), totals, resolve as (answer: Result[] | ManyTotals) => void, reject);
      } catch (error) {
        reject(error);
      }
    });
  }

  /** The rest of a result too large for its batch's reply, slice by slice, from the worker that holds it. */
  async fetchParked(channel: WorkerChannel, id: number, generation: number, site: FailureSite): Promise<Record<string, unknown>[]> {
    const rows: Record<string, unknown>[] = [];
    for (let next: number | undefined = id; next !== undefined; ) {
      let reply: OpReply;
      try {
        reply = await this.op(channel, Op.More, [next], Date.now() + site.timeoutMs, generation);
      } catch (error) {
        throw this.failure(error, { ...site, mode: 'read' });
      }
      if (isFault(reply)) throw this.faults.fault(reply, site);
      const slice = reply as MoreReply;
      if (slice.z === true) restoreBlobs(slice.r);
      for (const row of slice.r) rows.push(row);
      next = slice.p;
    }
    return rows;
  }

  /** Compiles `sql` on the worker (errors surface now) and hands back a statement bound to `run`. */
  async prepare<R extends Row = Row>(
    channel: WorkerChannel,
    binding: Binding,
    sql: string,
    ctx: DataContext | undefined,
    run: (sql: string, params: readonly Value[] | undefined, ctx: DataContext | undefined, options: QueryOptions | undefined) => Promise<Result<R>>,
    unprepare: (sql: string) => Promise<void>,
  ): Promise<{ statement: PreparedStatement<R>; readonly: boolean }> {
    if (this.#closed) throw this.closedError();
    const timeoutMs = remainingMs(ctx);
    const site: FailureSite = { sql, params: undefined, ctx, mode: 'read', timeoutMs, role: channel.label };
    let reply: OpReply;
    try {
      reply = await this.op(channel, Op.Prepare, [sql], Date.now() + timeoutMs, binding.generation);
    } catch (error) {
      throw this.failure(error, site);
    }
    if (isFault(reply)) throw this.faults.fault(reply, site);
    const statement: PreparedStatement<R> = {
      sql,
      query: (params, queryCtx, options) => run(sql, params, queryCtx ?? ctx, options),
      close: () => unprepare(sql),
    };
    return { statement, readonly: (reply as PrepareReply).o };
  }

  /** Drops `sql` from the worker's statement cache. */
  async unprepare(channel: WorkerChannel, sql: string): Promise<void> {
    if (this.#closed || !channel.attached) return;
    try {
      await this.op(channel, Op.Unprepare, [sql], Date.now() + remainingMs(undefined), 0);
    } catch {
      // A restarted worker has an empty cache anyway.
    }
  }

  async ping(channel: WorkerChannel, binding: Binding, ctx: DataContext | undefined): Promise<void> {
    if (this.#closed) throw this.closedError();
    const timeoutMs = remainingMs(ctx);
    const site: FailureSite = { sql: 'ping', params: undefined, ctx, mode: 'read', timeoutMs, role: channel.label };
    let reply: OpReply;
    try {
      reply = await this.op(channel, Op.Ping, [], Date.now() + timeoutMs, binding.generation);
    } catch (error) {
      throw this.failure(error, site);
    }
    if (isFault(reply)) throw this.faults.fault(reply, site);
  }

  /** Tells the worker pinned work is over (its cursors and transaction close); fire and forget, in order. */
  endLease(channel: WorkerChannel, binding: Binding): void {
    if (binding.lease === NO_LEASE || this.#closed) return;
    this.op(channel, Op.EndLease, [], Date.now() + remainingMs(undefined), binding.generation, binding.lease).catch(() => {
      // The worker is gone, and the lease with it.
    });
  }

  /**
   * Rows of `sql` in batches through a cursor on `channel` (pinned by the caller: a cursor holds
   * its handle). The next batch is fetched while the caller works through the current one;
   * breaking out of the loop closes the cursor.
   */
  async *stream<R extends Row = Row>(
    channel: WorkerChannel,
    binding: Binding,
    mode: StatementMode,
    sql: string,
    params: readonly Value[] | undefined,
    ctx: DataContext | undefined,
    options: StreamOptions | undefined,
    /** A reader's refusal of a write surfaces as NotReadonlyRefusal, for the router to retry on the writer. */
    refusable = false,
  ): AsyncGenerator<R, void, undefined> {
    if (this.#closed) throw this.closedError();
    const batchSize = resolveBatchSize(options);
    const site = (timeoutMs: number): FailureSite => ({ sql, params, ctx, mode, timeoutMs, role: channel.label, refusable });
    let timeoutMs = remainingMs(ctx);
    let pending: Promise<OpReply> | undefined = new Promise<OpReply>((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      channel.statement(new OpRequest(binding.generation, resolve, reject), Op.StreamOpen, sql, params, batchSize, deadline, binding.lease);
    });
    let id: number | undefined;
    let done = false;
    try {
      while (pending !== undefined) {
        let reply: OpReply;
        try {
          reply = await pending;
        } catch (error) {
          pending = undefined;
          throw this.failure(error, site(timeoutMs));
        }
        pending = undefined;
        if (isFault(reply)) {
          done = true;
          throw this.faults.fault(reply, site(timeoutMs));
        }
        const batch = reply as StreamReply;
        if (batch.z === true) restoreBlobs(batch.r);
        id = batch.s;
        done = batch.d;
        if (!done) {
          timeoutMs = remainingMs(ctx);
          pending = this.op(channel, Op.StreamNext, [id, batchSize], Date.now() + timeoutMs, binding.generation, binding.lease);
        }
        for (const row of batch.r) yield row as R;
      }
    } finally {
      // A prefetch still in flight is answered and dropped; the close goes after it, in order.
      pending?.catch(() => undefined);
      if (!done && id !== undefined && !this.#closed) {
        this.op(channel, Op.StreamClose, [id], Date.now() + remainingMs(undefined), binding.generation, binding.lease).catch(() => undefined);
      }
    }
  }

  /** A TransportFailure as the typed error for `site`; anything else as it is. */
  failure(error: unknown, site: FailureSite): unknown {
    return error instanceof TransportFailure ? this.faults.transport(error, site) : error;
  }
}

function resolveMaxRows(options: QueryOptions | undefined): number {
  const maxRows = options?.maxRows;
  if (maxRows === undefined) return DEFAULT_MAX_ROWS;
  if (!Number.isInteger(maxRows) || maxRows < 0 || maxRows > MAX_ROWS_CAP) throw new InvalidDataConfig('maxRows', `must be an integer in 0..${MAX_ROWS_CAP}, got ${String(maxRows)}`);
  return maxRows;
}

function resolveBatchSize(options: StreamOptions | undefined): number {
  const batchSize = options?.batchSize;
  if (batchSize === undefined) return DEFAULT_STREAM_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_STREAM_BATCH) {
    throw new InvalidDataConfig('batchSize', `must be an integer in 1..${MAX_STREAM_BATCH}, got ${String(batchSize)}`);
  }
  return batchSize;
}

/** The statement `issue` queues; set right before each `new Promise(issue)`. */
let issuing: QueryRequest | undefined;

function issue(resolve: (result: Result) => void, reject: (error: unknown) => void): void {
  const request = issuing!;
  issuing = undefined;
  request.settle = resolve;
  request.fail = reject;
  try {
    request.channel.statement(request, Op.Query, request.sql, request.params, request.maxRows, request.deadline, request.binding.lease);
  } catch (error) {
    request.failWith(error);
  }
}

/** An op whose reply goes to a promise as it is (prepare, ping, cursors, checkpoints). */
class OpRequest implements Request {
  constructor(
    readonly generation: number,
    readonly resolve: (reply: OpReply) => void,
    readonly reject: (failure: TransportFailure) => void,
  ) {}

  answer(_frame: ReplyFrame, _index: number, value: unknown): void {
    this.resolve(value as OpReply);
  }
}

/** A statement on its way: the queue entry, the failure site and the promise's settlement in one object. */
class QueryRequest implements Request, FailureSite {
  readonly deadline: number;
  settle!: (result: Result) => void;
  fail!: (error: unknown) => void;

  readonly generation: number;

  constructor(
    readonly engine: Engine,
    readonly channel: WorkerChannel,
    readonly binding: Binding,
    readonly mode: StatementMode,
    readonly sql: string,
    readonly params: readonly Value[] | undefined,
    readonly ctx: DataContext | undefined,
    readonly timeoutMs: number,
    readonly maxRows: number,
    readonly refused: Reroute | undefined,
    /** Whether a failure records the caller's stack (rejectAtCaller). */
    readonly stacks: boolean,
  ) {
    this.deadline = Date.now() + timeoutMs;
    this.generation = binding.generation;
  }

  get role(): string {
    return this.channel.label;
  }

  answer(frame: ReplyFrame, index: number, value: unknown, slot: number, generation: number): void {
    const lastInsertId = insertIdOf(frame, index);
    const affected = frame.k[2 * index + 1]!;
    if (value === undefined) return this.settle(result([], affected, lastInsertId, frame.c[slot]!, NO_FIELDS));
    if (Array.isArray(value)) {
      if (frame.y?.includes(index) === true) restoreBlobs(value as Record<string, unknown>[]);
      return this.settle(result(value, affected, lastInsertId, frame.c[slot]!, this.engine.fields.of(this.sql, frame.f[slot]!)));
    }
    const failWith = (error: unknown): void => this.failWith(error);
    if (isFault(value)) {
      if (value.x === Fault.NotReadonly && this.refused !== undefined) {
        this.refused(this.sql, this.params, this.ctx, { maxRows: this.maxRows }).then(this.settle, failWith);
        return;
      }
      return this.failWith(this.engine.faults.fault(value, this));
    }
    const command = frame.c[slot]!;
    const fields = this.engine.fields.of(this.sql, frame.f[slot]!);
    this.engine.fetchParked(this.channel, (value as ParkedRows).parked, generation, this).then(
      (rows) => this.settle(result(rows, affected, lastInsertId, command, fields)),
      failWith,
    );
  }

  reject(failure: TransportFailure): void {
    this.failWith(this.engine.faults.transport(failure, this));
  }

  /** Rejects the statement's promise; with `stacks`, once the caller's stack is recorded. */
  failWith(error: unknown): void {
    if (this.stacks && error instanceof DbError && error.callerStack === undefined) this.settle(rejectAtCaller(error) as never);
    else this.fail(error);
  }
}

/** Op `index`'s insert rowid: the id column's number, or (NaN there) none or a bigint listed in `b`. */
function insertIdOf(frame: ReplyFrame, index: number): number | bigint | null {
  const idValue = frame.i[index]!;
  return idValue === idValue ? idValue : insertIdBeyondDouble(frame, index);
}

/** NaN in the id column: none, or (listed in `b`) a rowid too large for a double. */
function insertIdBeyondDouble(frame: ReplyFrame, index: number): bigint | null {
  if (frame.b !== undefined) for (const [at, id] of frame.b) if (at === index) return id;
  return null;
}

export { TransportFailure };
