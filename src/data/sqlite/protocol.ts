/**
 * What crosses the thread hop between a SQLite handle on the main thread and its worker actor.
 *
 * One `call` carries a batch: every request issued on the main thread in the same tick (up to a cap),
 * in columns (BatchFrame), run by the worker in order and answered by one ReplyFrame, also in
 * columns. Short keys and flat arrays of numbers keep the frames small and cheap to build and to
 * clone on both sides (plain arrays, not typed ones: see batch.ts); both sides import only types
 * from here, plus the op and answer numbers.
 */

/** Request kinds, one per op of a batch. */
export const Op = {
  /** A statement: SQL (by table slot), parameters, maxRows, deadline, lease. */
  Query: 0,
  /** x: [sql]: compiles (and caches) the statement; replies whether it only reads. */
  Prepare: 1,
  /** x: [sql]: drops it from the statement cache. */
  Unprepare: 2,
  /** Like Query, with the batch size in `m`: opens a cursor and replies with its first rows. */
  StreamOpen: 3,
  /** x: [streamId, batchSize] */
  StreamNext: 4,
  /** x: [streamId] */
  StreamClose: 5,
  /** x: [mode, busyTimeoutMs] */
  Checkpoint: 6,
  /** x: [parkedId]: the next slice of a result that did not fit in its batch's reply. */
  More: 7,
  /** x: [] */
  Ping: 8,
  /** x: [] with the lease in `l`: a pinned read or session is over; its cursors and transaction close. */
  EndLease: 9,
  /** Binds the worker instance to a channel generation: from then on it answers that generation's frames on its direct link. */
  Bind: 10,
  /** x: [sql, rows, maxRows, totals]: one statement over many rows (queryMany), the rows packed as in packed-rows.ts; `totals`: answer with ManyTotalsReply. */
  Many: 11,
  /** Dropped on the main thread after it was queued (bound to a worker that has since restarted). */
  Skip: 255,
} as const;
export type OpKind = (typeof Op)[keyof typeof Op];

export type CheckpointMode = 'PASSIVE' | 'FULL' | 'RESTART' | 'TRUNCATE';

export type SqliteParam = null | number | bigint | string | Buffer | Uint8Array;

/**
 * One batch, columnar: the ops' small integers interleaved in one array of numbers, each distinct
 * SQL text once, and the parameters of every statement in one flat array, so a batch of thousands of
 * statements costs a few large copies rather than thousands of small objects on either side, and a
 * batch of one statement (an awaited one) a handful of objects: each costs the clone on both sides.
 */
export interface BatchFrame {
  /** OP_FIELDS numbers per op, at OpField offsets. */
  readonly o: number[];
  /** The distinct SQL texts of the batch. */
  readonly t: string[];
  /** Parameters of every Query/StreamOpen, in op order. */
  readonly p: SqliteParam[];
  /** Deadline per op (ms since the epoch): past it, the op does not run. */
  readonly d: number[];
  /** Arguments of the other ops; absent when there are none. */
  readonly x?: unknown[][];
}

/** Where each of an op's numbers is in BatchFrame.o, from its first (op index × OP_FIELDS). */
export const OpField = {
  /** Op kind. */
  Kind: 0,
  /** Query/StreamOpen: slot of its SQL in `t`; other ops: index of their arguments in `x`. */
  Slot: 1,
  /** Parameter count. */
  Count: 2,
  /** maxRows (Query) or batch size (StreamOpen). */
  Limit: 3,
  /** Lease. */
  Lease: 4,
} as const;
export const OP_FIELDS = 5;

/** Reply kind per op. */
export const Answer = {
  /** A statement that returned no rows: its affected count and insert id are in `k` and `i`. */
  Done: 0,
  /** The reply is the next value of `v` (rows, a fault, or another op's reply). */
  Value: 1,
  Skipped: 255,
} as const;

/** The reply to a batch, columnar like the batch. */
export interface ReplyFrame {
  /** Per op, interleaved: its Answer, then its affected rows (statements; 0 otherwise). */
  readonly k: number[];
  /** Last insert rowid per op; NaN: none. Beyond 2^53 it is in `b`. */
  readonly i: number[];
  /** Values of the ops answered with Answer.Value, in op order. */
  readonly v: unknown[];
  /** Per SQL slot: the command tag's verb ('' if it never compiled). */
  readonly c: string[];
  /** Per SQL slot: its column names (null: it returns no rows). */
  readonly f: (readonly string[] | null)[];
  /** [op index, rowid] for rowids beyond 2^53; absent when none. */
  readonly b?: [number, bigint][];
  /** Indexes of the ops whose rows hold BLOBs; absent when none. */
  readonly y?: number[];
}

/** The rows of a statement were too many bytes for the batch's reply: fetch them with Op.More. */
export interface ParkedRows {
  readonly parked: number;
}

/** Lease 0: a statement of no pinned read (autocommit, or the writer's own transactions). */
export const NO_LEASE = 0;

/** Why an op failed in the worker; the main thread turns it into a typed DbError. */
export const Fault = {
  /** better-sqlite3 threw; `k` is its `err.code`. */
  Sqlite: 'sqlite',
  /** SQLITE_BUSY persisted through busy_timeout and the retries. */
  Busy: 'busy',
  /** A reader was handed a statement that writes; the main thread sends it to the writer. */
  NotReadonly: 'not_readonly',
  TooManyRows: 'too_many_rows',
  /** The op's deadline passed before it ran: it did not run. */
  Timeout: 'timeout',
  /** The pinned read it belonged to was open longer than maxReadMs and was rolled back. */
  ReadTooLong: 'read_too_long',
  /** One row is over the payload cap. */
  RowTooLarge: 'row_too_large',
  /** A stream id or parked result the worker no longer has. */
  Gone: 'gone',
  Internal: 'internal',
} as const;
export type FaultKind = (typeof Fault)[keyof typeof Fault];

/** A failed op: message, kind, SQLite code, and a number (maxRows, size) where the kind has one. */
export interface FaultReply {
  readonly e: string;
  readonly x: FaultKind;
  readonly k?: string;
  readonly n?: number;
}

/** A slice of parked rows; `p` set: more slices follow. */
export interface MoreReply {
  readonly r: Record<string, unknown>[];
  readonly p?: number;
  /** The rows hold BLOBs. */
  readonly z?: boolean;
}

/** A stream's batch: `d` true once the cursor is exhausted (and closed). */
export interface StreamReply {
  readonly s: number;
  readonly r: Record<string, unknown>[];
  readonly d: boolean;
  /** The rows hold BLOBs. */
  readonly z?: boolean;
}

/**
 * The rows of an Op.Many, answered together (the first fault instead ends the op, and the
 * transaction queryMany runs in rolls back): affected rows and insert ids per row as in ReplyFrame.
 */
export interface ManyReply {
  /** Float64Arrays from TYPED_FROM_ROWS rows on (packed-rows.ts). */
  readonly a: ArrayLike<number>;
  readonly i: ArrayLike<number>;
  /** [row, rowid] for rowids beyond 2^53. */
  readonly b: [number, bigint][];
  /** Per row: its rows, or where they were parked; absent when no row returned any. */
  readonly v?: (Record<string, unknown>[] | ParkedRows | undefined)[];
  /** Rows whose values hold BLOBs. */
  readonly y: number[];
  readonly c: string;
  readonly f: readonly string[] | null;
}

/** An Op.Many run for its totals alone: rows run, and their affected counts summed. */
export interface ManyTotalsReply {
  readonly r: number;
  readonly t: number;
}

/** PRAGMA wal_checkpoint's row: busy (1 when it could not finish), WAL frames, frames checkpointed. */
export interface CheckpointReply {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

export interface PrepareReply {
  readonly o: boolean;
  readonly f: readonly string[];
}

export type OpReply = MoreReply | StreamReply | CheckpointReply | PrepareReply | ManyReply | ManyTotalsReply | FaultReply | true;

export function isFault(reply: unknown): reply is FaultReply {
  return typeof reply === 'object' && reply !== null && typeof (reply as FaultReply).x === 'string';
}

/** How the worker opens its handle; spawn arguments, so plain data. */
export interface WorkerOptions {
  readonly path: string;
  readonly role: 'writer' | 'reader';
  readonly busyTimeoutMs: number;
  readonly busyRetries: number;
  readonly journalSizeLimitBytes: number;
  readonly walAutocheckpointPages: number;
  readonly statementCacheSize: number;
  readonly maxReadMs: number;
  /** PRAGMA synchronous on the writer (config.ts: SqliteSynchronous). */
  readonly synchronous: 'full' | 'normal';
  /** Bytes one reply may take (the system's payloadLimitBytes less headroom for framing). */
  readonly replyBudgetBytes: number;
  /** Name of the BroadcastChannel the worker answers batches on once bound (direct-link.ts); none: the actor path only. */
  readonly direct?: string;
}
