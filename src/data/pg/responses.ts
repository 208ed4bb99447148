/**
 * The server's answers once the connection is ready: each message goes to the head op (the server
 * answers in order). DataRow, CommandComplete, ReadyForQuery and the bodiless completions are
 * read inline (the hot path); the rest is parsed by pg-protocol through the checked MessageParser.
 * Anything out of place is a ProtocolError, which ends the connection.
 *
 * Because every answer goes to the head, one missing or extra message would shift all later
 * answers to the wrong callers. So the order the protocol guarantees is checked: after an
 * ErrorResponse only ReadyForQuery may come (the server skips to the Sync, or ends the simple
 * Query); after an extended statement's completion, only its ReadyForQuery; and a statement's
 * ReadyForQuery must follow its completion or error. Asynchronous messages (notices, notifications,
 * parameter changes) may come anywhere.
 */
import type { DatabaseError, NotificationResponseMessage, ParameterDescriptionMessage, ParameterStatusMessage, RowDescriptionMessage } from 'pg-protocol/dist/messages.js';
import { MAX_ROW_BYTES } from '../database.js';
import { DbError, ProtocolError, RowTooLarge } from '../errors.js';
import type { Logger } from '../../telemetry/index.js';
import { allBinary, columnsOf, NO_COLUMNS, shapeOfColumns, shapeOfDescription } from './columns.js';
import type { CopySession } from './copy.js';
import type { CursorSession } from './cursor.js';
import { cstringBody, decodeDataRow, MessageParser, Msg, wellFramedRow, type FrameSink } from './frames.js';
import type { PgMetrics } from './metrics.js';
import type { Notifications } from './notifications.js';
import { Cancel, OpKind, type Op, type SessionHost } from './ops.js';
import type { Pipeline } from './pipeline.js';
import { isFatal, queryError, strayCancel } from './server-error.js';
import type { ColumnDesc, ResultShape } from './result-shape.js';
import { StatementState, type StatementCache } from './statement-cache.js';

/** Server parameters kept (the server sends about 15, and a few more as settings change). */
const MAX_SERVER_PARAMS = 128;

export interface ResponseHost extends SessionHost {
  readonly pipeline: Pipeline;
  readonly cache: StatementCache;
  readonly log: Logger;
  readonly serverParams: Record<string, string>;
  /** Transaction status of the last ReadyForQuery: I (idle), T (in a block), E (failed block). */
  txStatus: string;
  /** A FATAL error the server sent before hanging up. */
  fatal: DatabaseError | null;
  /** An op left the pipeline: write what was waiting. */
  afterDone(): void;
}

/** Where the head op is in its answer, for the order checks. */
const Phase = {
  /** Still answering. */
  Open: 0,
  /** An extended statement completed (or any statement failed): only ReadyForQuery may follow. */
  AwaitReady: 1,
  /** A simple Query's statement completed: another result set, or ReadyForQuery. */
  Completed: 2,
} as const;
type Phase = (typeof Phase)[keyof typeof Phase];

export class Responses implements FrameSink {
  #phase: Phase = Phase.Open;
  /** What put the head into AwaitReady, for the error message. */
  #awaitReason = '';

  constructor(
    private readonly host: ResponseHost,
    private readonly parser: MessageParser,
    private readonly notifications: Notifications,
    private readonly metrics: PgMetrics | undefined,
  ) {}

  frame(type: number, buf: Buffer, start: number, end: number): void {
    const host = this.host;
    const op = host.pipeline.sent.peek();
    if (this.#phase === Phase.AwaitReady && type !== Msg.ReadyForQuery && !isAsync(type)) {
      throw new ProtocolError(`'${String.fromCharCode(type)}' after ${this.#awaitReason}, where only ReadyForQuery may come`);
    }
    switch (type) {
      case Msg.DataRow: {
        if (op === undefined) throw new ProtocolError('DataRow with no statement in flight');
        if (op.kind === OpKind.Cursor) return (op.session as CursorSession).row(host, op, buf, start, end);
        // Past maxRows, answered (timed out) or failed (a value could not be decoded): drained, not kept.
        if (++op.count > op.maxRows || op.answered || op.error !== null) {
          op.tooMany = op.count > op.maxRows;
          return;
        }
        const shape = op.shape ?? (op.shape = shapeFromStatement(op));
        try {
          op.rows.push(decodeDataRow(buf, start, end, shape));
        } catch (error) {
          this.#undecodable(op, error, buf, start, end, shape);
        }
        return;
      }
      case Msg.CommandComplete:
        if (op === undefined) throw new ProtocolError('CommandComplete with no statement in flight');
        this.#completed(op, 'CommandComplete');
        op.complete(cstringBody(buf, start, end));
        // Statements dropped behind the cache's back: forget them all (nothing left to Close).
        if (op.command === 'DEALLOCATE ALL' || op.command === 'DISCARD ALL') host.cache.clear();
        if (op.kind === OpKind.Cursor) (op.session as CursorSession).completed(host, op);
        return;
      case Msg.ReadyForQuery:
        return this.#readyForQuery(buf[start]!);
      case Msg.BindComplete:
      case Msg.ParseComplete:
      case Msg.CloseComplete:
        if (op === undefined) throw new ProtocolError('a completion with no statement in flight');
        return;
      case Msg.NoData:
        if (op === undefined) throw new ProtocolError('NoData with no statement in flight');
        if (describes(op)) described(op, [], host);
        else op.shape = NO_COLUMNS;
        return;
      case Msg.EmptyQueryResponse:
        if (op === undefined) throw new ProtocolError('EmptyQueryResponse with no statement in flight');
        this.#completed(op, 'EmptyQueryResponse');
        op.command = '';
        return;
      case Msg.PortalSuspended:
        if (op === undefined || op.kind !== OpKind.Cursor) throw new ProtocolError('PortalSuspended outside a cursor');
        return (op.session as CursorSession).suspended(host, op);
      case Msg.CopyData:
        if (op === undefined || op.kind !== OpKind.CopyOut) throw new ProtocolError('CopyData outside COPY TO');
        return (op.session as CopySession).chunk(host, op, buf.subarray(start, end));
      case Msg.CopyDone:
        if (op === undefined || op.kind !== OpKind.CopyOut) throw new ProtocolError('CopyDone outside COPY TO');
        return;
    }
    this.#message(op, type, buf, start, end);
  }

  /** A decoder threw: on a well-framed row that fails the statement (the rest is drained); otherwise the stream is broken. */
  #undecodable(op: Op, error: unknown, buf: Buffer, start: number, end: number, shape: ResultShape): void {
    if (!wellFramedRow(buf, start, end, shape.names.length)) throw error;
    if (op.error === null) {
      const why = error instanceof Error ? error.message : String(error);
      op.error = error instanceof DbError ? error : new ProtocolError(`cannot decode a column: ${why}`, { cause: error });
      if (op.error.connection === undefined) Object.assign(op.error, { connection: this.host.config.redacted });
    }
  }

  oversized(type: number, bytes: number): void {
    const op = this.host.pipeline.sent.peek();
    if (op === undefined) throw new ProtocolError('oversized message with no statement in flight');
    op.oversized = bytes;
    if (op.error === null) op.error = new RowTooLarge(bytes, MAX_ROW_BYTES, { connection: this.host.config.redacted, params: op.reportedParams });
    if (type === Msg.CopyData && op.kind === OpKind.CopyOut) (op.session as CopySession).failed(this.host, op);
  }

  /** Less frequent messages, parsed by pg-protocol. */
  #message(op: Op | undefined, type: number, buf: Buffer, start: number, end: number): void {
    const host = this.host;
    const message = this.parser.parse(type, buf, start, end);
    switch (type) {
      case Msg.RowDescription: {
        if (op === undefined) throw new ProtocolError('RowDescription with no statement in flight');
        const description = message as RowDescriptionMessage;
        if (describes(op)) described(op, columnsOf(description), host);
        else if (op.kind === OpKind.Cursor) (op.session as CursorSession).describe(shapeOfDescription(description, host.config.types));
        else op.resetResult(shapeOfDescription(description, host.config.types));
        return;
      }
      case Msg.ParameterDescription:
        if (op === undefined || op.stmt === null) throw new ProtocolError('ParameterDescription with no statement being prepared');
        if (op.stmt.state === StatementState.Preparing) op.stmt.paramOids = (message as ParameterDescriptionMessage).dataTypeIDs;
        return;
      case Msg.ErrorResponse:
        return this.#error(op, message as DatabaseError);
      case Msg.NoticeResponse:
        if (host.log.isLevelEnabled('debug')) host.log.debug({ event: 'pg.notice', notice: (message as DatabaseError).message }, 'server notice');
        return;
      case Msg.NotificationResponse: {
        const n = message as NotificationResponseMessage;
        this.notifications.dispatch(n.channel, n.payload, n.processId);
        return;
      }
      case Msg.ParameterStatus: {
        const status = message as ParameterStatusMessage;
        if (status.parameterName in host.serverParams || Object.keys(host.serverParams).length < MAX_SERVER_PARAMS) {
          host.serverParams[status.parameterName] = status.parameterValue;
        }
        return;
      }
      case Msg.CopyInResponse:
        if (op === undefined || op.kind !== OpKind.CopyIn) throw new ProtocolError('CopyInResponse for a statement that is not COPY FROM STDIN');
        return (op.session as CopySession).started(host, op);
      case Msg.CopyOutResponse:
        if (op === undefined || op.kind !== OpKind.CopyOut) throw new ProtocolError('CopyOutResponse for a statement that is not COPY TO STDOUT');
        return (op.session as CopySession).started(host, op);
      default:
        throw new ProtocolError(`unexpected message '${String.fromCharCode(type)}' after startup`);
    }
  }

  #error(op: Op | undefined, error: DatabaseError): void {
    const host = this.host;
    if (isFatal(error)) {
      // The server hangs up next; the ops in flight fail then, as lost.
      host.fatal = error;
      return;
    }
    if (op === undefined) {
      host.log.warn({ event: 'pg.unsolicited_error', sqlstate: error.code }, error.message);
      return;
    }
    // The server now skips to the Sync (or ends the simple Query): ReadyForQuery is next.
    this.#phase = Phase.AwaitReady;
    this.#awaitReason = 'ErrorResponse';
    const connection = host.config.redacted;
    const stmt = op.stmt;
    let failure: DbError;
    if (error.code === '26000' && stmt !== null && stmt.failure !== null) failure = queryError(stmt.failure, connection, op.reportedParams);
    else if (error.code === '57014' && op.cancel === Cancel.None && op.exposed) failure = strayCancel(error, connection, op.reportedParams);
    else failure = queryError(error, connection, op.reportedParams);
    if (stmt !== null) {
      if (describes(op)) {
        stmt.state = StatementState.Failed;
        stmt.failure = error;
        host.cache.drop(stmt, false);
      } else if (error.code === '26000' || error.code === '0A000') {
        // Gone (DEALLOCATE by hand) or stale (its result type changed): prepare afresh next time.
        host.cache.drop(stmt, error.code === '0A000');
      }
    }
    if (op.error === null) op.error = failure;
    if (op.kind === OpKind.Cursor) (op.session as CursorSession).failed(host, op);
    else if (op.kind === OpKind.CopyIn || op.kind === OpKind.CopyOut) (op.session as CopySession).failed(host, op);
  }

  #readyForQuery(status: number): void {
    const host = this.host;
    if (status !== 0x49 && status !== 0x54 && status !== 0x45) throw new ProtocolError(`bad transaction status 0x${status.toString(16)}`);
    const head = host.pipeline.sent.peek();
    if (head === undefined) throw new ProtocolError('ReadyForQuery with no statement in flight');
    // A statement always completes or fails before its ReadyForQuery; one that did neither would
    // take the next statement's answer.
    if (head.kind === OpKind.Query && this.#phase === Phase.Open) throw new ProtocolError('ReadyForQuery before the statement completed or failed');
    this.#phase = Phase.Open;
    host.txStatus = status === 0x49 ? 'I' : status === 0x54 ? 'T' : 'E';
    const op = host.pipeline.done(Date.now())!;
    this.#finish(op);
    host.afterDone();
  }

  /** A statement's result ended: an extended statement has one, a simple Query one per statement of its text. */
  #completed(op: Op, what: string): void {
    if (op.kind !== OpKind.Query) return;
    if (op.extended) {
      this.#phase = Phase.AwaitReady;
      this.#awaitReason = what;
    } else this.#phase = Phase.Completed;
  }

  #finish(op: Op): void {
    const host = this.host;
    if (this.metrics !== undefined && op.started > 0) this.metrics.observe(op, performance.now() - op.started);
    switch (op.kind) {
      case OpKind.Query:
        if (!op.answered) op.answer(op.outcome(host.config.redacted));
        return;
      case OpKind.Prepare:
      case OpKind.Close:
        op.answer(op.error ?? undefined);
        return;
      case OpKind.Cursor:
        return (op.session as CursorSession).finished(host, op);
      case OpKind.CopyIn:
      case OpKind.CopyOut:
        return (op.session as CopySession).finished(host, op);
    }
  }
}

/** Messages the server may send at any time, between any others. */
function isAsync(type: number): boolean {
  return type === Msg.NoticeResponse || type === Msg.NotificationResponse || type === Msg.ParameterStatus;
}

/** Whether this op's Describe (statement) is the one that makes its statement ready. */
function describes(op: Op): boolean {
  return op.stmt !== null && op.stmt.state === StatementState.Preparing && (op.preparing || op.kind === OpKind.Prepare);
}

/** The statement's Describe answered: its columns are known and it is ready. */
function described(op: Op, columns: ColumnDesc[], host: ResponseHost): void {
  const stmt = op.stmt!;
  const types = host.config.types;
  stmt.columns = columns;
  stmt.textShape = shapeOfColumns(columns, 0, types);
  stmt.binary = allBinary(columns, types);
  stmt.binaryShape = stmt.binary ? shapeOfColumns(columns, 1, types) : stmt.textShape;
  stmt.state = StatementState.Ready;
  // This op's own Bind (written before the description was known) asked for text.
  op.shape = stmt.textShape;
}

/** A Bind to a statement still being prepared when it was written: its columns come from the statement. */
function shapeFromStatement(op: Op): ResultShape {
  const stmt = op.stmt;
  if (stmt === null || stmt.textShape === null) throw new ProtocolError('DataRow before any RowDescription');
  return op.binary ? stmt.binaryShape! : stmt.textShape;
}
