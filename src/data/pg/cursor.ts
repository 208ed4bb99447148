/**
 * Cursors: a large result read in batches through the unnamed portal.
 *
 * Execute(maxRows = batchSize) answers a batch then PortalSuspended; the next batch is another
 * Execute. Between batches the portal lives in the implicit transaction block the extended
 * protocol opened, so the connection writes Flush (send me what you have) rather than Sync (which
 * would end the block and destroy the portal). Why not DECLARE CURSOR: it needs an explicit
 * transaction (BEGIN ... COMMIT round trips, and a failure there would be the caller's transaction
 * too) and SQL text around the caller's statement; the portal needs neither and takes values like
 * any statement. Either way the socket belongs to the cursor until it ends: anything written
 * meanwhile would run inside its block, so other statements wait in the connection's queue.
 * The cursor ends with Close(portal) + Sync: after its last row, on error, or when the consumer
 * stops early (breaking out of `for await` runs the generator's `finally`).
 */
import { serialize } from 'pg-protocol';
import { NO_REPLY } from '../../behaviours/index.js';
import { DbError, ProtocolError } from '../errors.js';
import type { Row } from '../values.js';
import type { ResultShape } from './result-shape.js';
import { decodeDataRow, wellFramedRow } from './frames.js';
import { Cancel, type Op, type Replier, type SessionHost } from './ops.js';
import { CursorClose, CursorNext, type CursorBatch, type CursorOpen } from './requests.js';

/** Rows per batch: default 1,000, at most 100,000. */
export const DEFAULT_BATCH_SIZE = 1_000;
export const MAX_BATCH_SIZE = 100_000;

const FLUSH = serialize.flush();
const CLOSE_PORTAL_SYNC = Buffer.concat([serialize.close({ type: 'P' }), serialize.sync()]);

/** The actor's side of one open cursor (the session of its op). */
export class CursorSession {
  shape: ResultShape | null = null;
  rows: Row[] = [];
  /** The last row was read (CommandComplete). */
  done = false;
  /** Close + Sync written: the portal is going away. */
  ended = false;
  closer: Replier | null = null;
  /**
   * How long the consumer may take before asking for the next batch: the last request's timeout.
   * A cursor holds its connection, so one left unread must not hold it forever.
   */
  idleMs: number;

  constructor(
    readonly batchSize: number,
    timeoutMs: number,
  ) {
    this.idleMs = timeoutMs;
  }

  static next(host: SessionHost, request: CursorNext, from: Replier, now: number): unknown {
    const op = host.sessions.get(request.cursor);
    if (op === undefined) return new DbError('the cursor is closed (it failed, ran past its timeout, or its connection closed)', { connection: host.config.redacted });
    const session = op.session as CursorSession;
    if (op.error !== null) return op.error;
    if (session.done || session.ended) return { rows: [], done: true } satisfies CursorBatch;
    op.from = from;
    session.idleMs = request.timeoutMs;
    op.deadline = now + request.timeoutMs;
    host.arm(op.deadline);
    host.write(serialize.execute({ rows: session.batchSize }));
    host.write(FLUSH);
    return NO_REPLY;
  }

  static close(host: SessionHost, request: CursorClose, from: Replier): unknown {
    const op = host.sessions.get(request.cursor);
    if (op === undefined) return undefined;
    const session = op.session as CursorSession;
    session.closer = from;
    session.end(host);
    return NO_REPLY;
  }

  describe(shape: ResultShape): void {
    this.shape = shape;
  }

  row(host: SessionHost, op: Op, buf: Buffer, start: number, end: number): void {
    if (op.answered || op.error !== null) return;
    const shape = this.shape;
    if (shape === null) throw new ProtocolError('DataRow before the cursor was described');
    try {
      this.rows.push(decodeDataRow(buf, start, end, shape));
    } catch (error) {
      // A value no decoder can read fails the cursor; a malformed row breaks the connection.
      if (!wellFramedRow(buf, start, end, shape.names.length)) throw error;
      op.error = error instanceof DbError ? error : new ProtocolError(`cannot decode a column: ${String(error)}`, { cause: error, connection: host.config.redacted });
      op.answer(op.error);
      this.end(host);
    }
  }

  /** A batch is complete and more rows remain. */
  suspended(host: SessionHost, op: Op): void {
    // Timed out or aborted while the batch ran, and the cancel came too late: end it here.
    if (op.cancel !== Cancel.None || op.error !== null) return this.end(host);
    op.deadline = Date.now() + this.idleMs;
    host.arm(op.deadline);
    const rows = this.rows;
    this.rows = [];
    op.answer({ rows, done: false } satisfies CursorBatch);
  }

  /** The last batch is complete. */
  completed(host: SessionHost, op: Op): void {
    this.done = true;
    op.deadline = Infinity;
    const rows = this.rows;
    this.rows = [];
    op.answer({ rows, done: true } satisfies CursorBatch);
    this.end(host);
  }

  failed(host: SessionHost, op: Op): void {
    op.answer(op.error);
    this.end(host);
  }

  /** The batch's deadline passed or the consumer aborted: between batches nothing runs, so end it now. */
  expired(host: SessionHost, _op: Op, idle: boolean): void {
    if (idle) this.end(host);
  }

  end(host: SessionHost): void {
    if (this.ended) return;
    this.ended = true;
    host.write(CLOSE_PORTAL_SYNC);
  }

  /** ReadyForQuery: the portal is gone and the socket free. */
  finished(host: SessionHost, op: Op): void {
    host.sessions.delete(op.request);
    if (!op.answered) op.answer(op.error ?? ({ rows: this.rows, done: true } satisfies CursorBatch));
    this.closer?.reply(undefined);
    this.closer = null;
  }

  lost(_op: Op, _error: DbError): void {
    this.closer?.reply(undefined);
    this.closer = null;
  }
}

/** The handle's side: batches become rows; leaving the loop early closes the cursor. */
export async function* cursorRows<R>(
  call: (request: object, identity: object, timeoutMs: number) => Promise<unknown>,
  open: CursorOpen,
  timeoutMs: () => number,
): AsyncGenerator<R, void, undefined> {
  let batch = (await call(open, open, open.timeoutMs)) as CursorBatch;
  let done = batch.done;
  try {
    for (;;) {
      for (const row of batch.rows) yield row as R;
      if (done) return;
      const ms = timeoutMs();
      batch = (await call(new CursorNext(open, ms), open, ms)) as CursorBatch;
      done = batch.done;
    }
  } finally {
    if (!done) await call(new CursorClose(open), open, 30_000).catch(() => undefined);
  }
}
