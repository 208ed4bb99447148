/**
 * One unit of work in the server's answer order: everything up to one ReadyForQuery (a Sync, or a
 * simple Query). The connection keeps them in a FIFO; each message the server sends belongs to the
 * head. A single class for every kind keeps the hot path monomorphic.
 */
import { DbError, TooManyRows } from '../errors.js';
import type { ResolvedPgConfig } from './config.js';
import type { Result, Row } from '../values.js';
import { NO_COLUMNS } from './columns.js';
import type { ResultShape } from './result-shape.js';
import type { Statement } from './statement-cache.js';

export const OpKind = {
  Query: 0,
  /** PrepareRequest: Parse + Describe + Sync. */
  Prepare: 1,
  /** A portal read in batches; holds the socket until its Sync. */
  Cursor: 2,
  CopyIn: 3,
  CopyOut: 4,
  /** Close of an evicted statement, answered to nobody but its caller. */
  Close: 5,
} as const;
export type OpKind = (typeof OpKind)[keyof typeof OpKind];

/** Who gets the answer: a call's reply handle (or the actor itself, for its own statements). */
export interface Replier {
  reply(value: unknown): void;
}

/** What cursor and COPY sessions need of the connection. */
export interface SessionHost {
  readonly config: ResolvedPgConfig;
  /** Open cursors and COPYs, by the request that opened them. */
  readonly sessions: Map<object, Op>;
  /** Queues bytes for the next flush. */
  write(message: Buffer): void;
  /** Writes now; false when the socket's buffer is full (wait for drain). */
  writeNow(message: Buffer): boolean;
  pauseReading(paused: boolean): void;
  /** Makes sure the deadline timer fires by `deadline`. */
  arm(deadline: number): void;
}

export const Cancel = { None: 0, Timeout: 1, Abort: 2 } as const;
export type Cancel = (typeof Cancel)[keyof typeof Cancel];

export class Op {
  from: Replier | null;
  /** Prepared statement used (named), or null (unnamed / simple). */
  stmt: Statement | null = null;
  /** Extended protocol (values, or a PreparedStatement); simple Query otherwise. */
  extended = false;
  /** Run as the unnamed statement even when the cache would prepare it. */
  oneOff = false;
  /** This op's Parse and Describe create `stmt`. */
  preparing = false;
  /** Results asked for in binary. */
  binary = false;
  shape: ResultShape | null = null;
  rows: Row[] = [];
  count = 0;
  command = '';
  affected = 0;
  error: DbError | null = null;
  /** More rows than maxRows: the rest are read and dropped. */
  tooMany = false;
  /** Bytes of a row over MAX_ROW_BYTES that was skipped. */
  oversized = 0;
  deadline: number;
  cancel: Cancel = Cancel.None;
  cancelSent = false;
  /** Written behind a statement a CancelRequest was sent for: a 57014 here is that cancel arriving late. */
  exposed = false;
  /** performance.now() at send, when metrics are on. */
  started = 0;
  /** Cursor/COPY: the session's own state (see cursor.ts, copy.ts). */
  session: unknown = null;

  constructor(
    readonly kind: OpKind,
    /** The handle's request object: abort casts name it. */
    readonly request: object,
    from: Replier | null,
    readonly sql: string,
    readonly params: readonly unknown[],
    readonly maxRows: number,
    readonly timeoutMs: number,
    readonly debug: boolean,
    now: number,
  ) {
    this.from = from;
    this.deadline = now + timeoutMs;
  }

  /** Answers the caller once; later answers (after a timeout or abort) are dropped. */
  answer(value: unknown): void {
    const from = this.from;
    if (from === null) return;
    this.from = null;
    from.reply(value);
  }

  get answered(): boolean {
    return this.from === null;
  }

  /** Parameters for error reports: only in debug, as they may hold secrets. */
  get reportedParams(): readonly unknown[] | undefined {
    return this.debug ? this.params : undefined;
  }

  /** Starts a new result set (simple protocol: each statement of the text has its own). */
  resetResult(shape: ResultShape): void {
    this.shape = shape;
    this.rows = [];
    this.count = 0;
  }

  /** The reply at ReadyForQuery: the error, TooManyRows, or the result. */
  outcome(connection: DbError['connection']): Result | DbError {
    if (this.error !== null) return this.error;
    if (this.tooMany) return new TooManyRows(this.maxRows, { connection, params: this.reportedParams });
    return {
      rows: this.rows,
      affected: this.affected,
      lastInsertId: null,
      command: this.command,
      fields: (this.shape ?? NO_COLUMNS).fields,
    };
  }

  /** CommandComplete's tag: "INSERT 0 5" → INSERT, 5; "CREATE TABLE" → CREATE TABLE, 0. */
  complete(tag: string): void {
    let end = tag.length;
    let affected = 0;
    let found = false;
    // Trailing numbers are counts (INSERT has the oid, then the rows); the rest is the command.
    for (;;) {
      const space = tag.lastIndexOf(' ', end - 1);
      const word = tag.slice(space + 1, end);
      if (space < 0 || word.length === 0 || !isDigits(word)) break;
      if (!found) {
        affected = Number(word);
        found = true;
      }
      end = space;
    }
    this.command = tag.slice(0, end);
    this.affected = affected;
  }
}

function isDigits(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
