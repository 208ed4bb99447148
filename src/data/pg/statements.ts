/**
 * The statements of a connection, from call to wire: each request becomes an op, written at once or
 * queued behind a full pipeline, a cursor or COPY, or a cancel; as an op leaves the pipeline, the
 * queued ones go. The actor (connection.ts) dispatches the calls and owns the socket; the messages
 * are written by writer.ts, the answers read by responses.ts.
 */
import { serialize } from 'pg-protocol';
import { NO_REPLY } from '../../behaviours/index.js';
import { DbError, ProtocolError, QueueFull } from '../errors.js';
import { CopySession } from './copy.js';
import { CursorSession } from './cursor.js';
import type { Deadlines } from './deadlines.js';
import { Op, OpKind, type Replier, type SessionHost } from './ops.js';
import type { Pipeline } from './pipeline.js';
import {
  CopyInStart,
  QueryRequest,
  type CopyOutStart,
  type CursorOpen,
  type PgConnectionStats,
  type PrepareRequest,
  type UnprepareRequest,
} from './requests.js';
import { StatementState } from './statement-cache.js';
import { checked, QueryWriter, type WriteTarget } from './writer.js';

const TYPES_SQL = 'SELECT n.name, t.oid::int8 AS oid, t.typarray::int8 AS array FROM unnest($1::text[]) AS n(name) JOIN pg_type t ON t.oid = to_regtype(n.name)';

/** What the statements need of the connection. */
export interface StatementHost extends SessionHost, WriteTarget {
  readonly pipeline: Pipeline;
  /** Transaction status of the last ReadyForQuery. */
  readonly txStatus: string;
}

export class Statements {
  readonly #writer: QueryWriter;

  constructor(
    private readonly host: StatementHost,
    private readonly deadlines: Deadlines,
    /** Ops are timed for the metrics. */
    private readonly metricsOn: boolean,
  ) {
    this.#writer = new QueryWriter(host.config.types);
  }

  // ---- calls on a ready connection -------------------------------------------------------------

  query(request: QueryRequest, from: Replier, now: number): unknown {
    const op = new Op(OpKind.Query, request, from, request.sql, request.params, request.maxRows, request.timeoutMs, request.debug, now);
    op.extended = request.extended;
    op.oneOff = request.oneOff;
    this.#submit(op);
    return NO_REPLY;
  }

  prepare(request: PrepareRequest, from: Replier, now: number): unknown {
    if (this.host.cache.use(request.sql).state !== StatementState.Unprepared) return undefined;
    this.#submit(new Op(OpKind.Prepare, request, from, request.sql, [], 0, request.timeoutMs, false, now));
    return NO_REPLY;
  }

  unprepare(request: UnprepareRequest, from: Replier, now: number): unknown {
    const cache = this.host.cache;
    const stmt = cache.peek(request.sql);
    if (stmt === undefined) return undefined;
    cache.drop(stmt, true);
    if (cache.evicted.length === 0) return undefined;
    this.#submit(new Op(OpKind.Close, request, from, '', [], 0, 30_000, false, now));
    return NO_REPLY;
  }

  openCursor(request: CursorOpen, from: Replier, now: number): unknown {
    const op = new Op(OpKind.Cursor, request, from, request.sql, request.params, Infinity, request.timeoutMs, request.debug, now);
    op.session = new CursorSession(request.batchSize, request.timeoutMs);
    this.host.sessions.set(request, op);
    this.#submit(op);
    return NO_REPLY;
  }

  startCopy(request: CopyInStart | CopyOutStart, from: Replier, now: number): unknown {
    const kind = request instanceof CopyInStart ? OpKind.CopyIn : OpKind.CopyOut;
    const op = new Op(kind, request, from, request.sql, [], Infinity, request.timeoutMs, false, now);
    op.session = new CopySession();
    this.host.sessions.set(request, op);
    this.#submit(op);
    return NO_REPLY;
  }

  /** Cancels the statement the server is running, if any; answered once the server took the request. */
  cancel(from: Replier): unknown {
    if (this.host.pipeline.head === undefined) return undefined;
    void this.deadlines.cancelHead().then(() => from.reply(undefined));
    return NO_REPLY;
  }

  stats(): PgConnectionStats {
    const { pipeline, cache, txStatus } = this.host;
    return { sent: pipeline.sent.length, queued: pipeline.waiting.length, cachedStatements: cache.size, txStatus };
  }

  /**
   * At startup, before any call: the oids of the custom types registered by name. `done` gets the
   * error when the query failed.
   */
  resolveTypes(names: readonly string[], timeoutMs: number, done: (error: DbError | undefined) => void): void {
    const types = this.host.config.types;
    const request = new QueryRequest(TYPES_SQL, [names], 10_000, timeoutMs, false, true);
    const replier: Replier = {
      reply: (value: unknown) => {
        if (value instanceof DbError) return done(value);
        for (const row of (value as { rows: { name: string; oid: bigint; array: bigint }[] }).rows) types.bindOid(row.name, Number(row.oid), Number(row.array));
        done(undefined);
      },
    };
    const op = new Op(OpKind.Query, request, replier, TYPES_SQL, request.params, 10_000, timeoutMs, false, Date.now());
    op.extended = true;
    this.#send(op);
  }

  // ---- the write side of the pipeline ------------------------------------------------------------

  /** Writes `op` now, or queues it behind a full pipeline, a cursor or COPY, or a cancel. */
  #submit(op: Op): void {
    const pipeline = this.host.pipeline;
    if (pipeline.writable && pipeline.waiting.length === 0) return this.#send(op);
    if (!pipeline.hold(op)) {
      const config = this.host.config;
      op.answer(new QueueFull('pg.maxQueued', config.maxQueued, { connection: config.redacted }));
      return;
    }
    this.deadlines.arm(op.deadline);
  }

  /** An op left the pipeline: its successor may need a cancel, and queued ops may go. */
  afterDone(): void {
    const pipeline = this.host.pipeline;
    this.deadlines.headChanged(pipeline.head);
    for (let op = pipeline.next(); op !== undefined; op = pipeline.next()) this.#send(op);
  }

  #send(op: Op): void {
    const host = this.host;
    try {
      switch (op.kind) {
        case OpKind.Query:
          if (op.extended) this.#writer.extended(host, op);
          else {
            this.#writer.closeEvicted(host);
            host.write(checked(serialize.query(op.sql)));
          }
          break;
        case OpKind.Prepare:
          this.#writer.prepare(host, op);
          break;
        case OpKind.Close:
          this.#writer.closeEvicted(host);
          host.write(serialize.sync());
          break;
        case OpKind.Cursor: {
          const session = op.session as CursorSession;
          const shape = this.#writer.cursor(host, op, session.batchSize);
          if (shape !== null) session.describe(shape);
          break;
        }
        case OpKind.CopyIn:
        case OpKind.CopyOut:
          host.write(checked(serialize.query(op.sql)));
          break;
      }
    } catch (error) {
      host.sessions.delete(op.request);
      op.answer(error instanceof DbError ? error : new ProtocolError(String(error), { cause: error }));
      return;
    }
    host.pipeline.written(op, Date.now());
    if (this.metricsOn) op.started = performance.now();
    this.deadlines.arm(op.deadline);
  }
}
