/**
 * The calls a PgConnection handle makes to its connection actor, and the casts it sends. One class
 * per request so the actor dispatches with `instanceof` (monomorphic, no string switch).
 */
import type { Row } from '../values.js';

/** A statement: the simple protocol unless it has values (or is a PreparedStatement's), the extended one then. */
export class QueryRequest {
  constructor(
    readonly sql: string,
    readonly params: readonly unknown[],
    readonly maxRows: number,
    readonly timeoutMs: number,
    readonly debug: boolean,
    readonly extended: boolean,
    /** Never the statement cache: a fresh Parse as the unnamed statement. */
    readonly oneOff = false,
    /** The caller's word on whether it only reads (QueryOptions.readOnly); undefined: judged from the text. */
    readonly readOnly: boolean | undefined = undefined,
  ) {}
}

/** Parse and describe now, keep in the statement cache (a PreparedStatement's first step). */
export class PrepareRequest {
  constructor(
    readonly sql: string,
    readonly timeoutMs: number,
  ) {}
}

/** Drop a statement from the cache and Close it on the server. */
export class UnprepareRequest {
  constructor(readonly sql: string) {}
}

export class CursorOpen {
  constructor(
    readonly sql: string,
    readonly params: readonly unknown[],
    readonly batchSize: number,
    readonly timeoutMs: number,
    readonly debug: boolean,
  ) {}
}

/** Next batch of the open cursor (named by its CursorOpen). */
export class CursorNext {
  constructor(
    readonly cursor: CursorOpen,
    readonly timeoutMs: number,
  ) {}
}

/** Close the open cursor (the consumer stopped early). */
export class CursorClose {
  constructor(readonly cursor: CursorOpen) {}
}

export interface CursorBatch {
  readonly rows: Row[];
  /** No more rows: the cursor is closed. */
  readonly done: boolean;
}

export class CopyInStart {
  constructor(
    readonly sql: string,
    readonly timeoutMs: number,
  ) {}
}

export class CopyInData {
  constructor(
    readonly copy: CopyInStart,
    readonly chunk: Buffer,
  ) {}
}

export class CopyInEnd {
  constructor(readonly copy: CopyInStart) {}
}

export class CopyInFail {
  constructor(
    readonly copy: CopyInStart,
    readonly reason: string,
  ) {}
}

export class CopyOutStart {
  constructor(
    readonly sql: string,
    readonly timeoutMs: number,
  ) {}
}

/** Chunks received since the last read; an empty list means the copy is over. */
export class CopyOutRead {
  constructor(readonly copy: CopyOutStart) {}
}

/** Cancel what the backend is running now. */
export class CancelCurrent {}

/** Waits until startup is over: replies the backend's identity, or the connect error. */
export class AwaitReady {}

export interface ReadyInfo {
  readonly processId: number;
  readonly serverParams: Readonly<Record<string, string>>;
}

/** The connection's counters, for tests and pools. */
export class StatsRequest {}

export interface PgConnectionStats {
  /** Statements written and not yet answered by the server (the pipeline). */
  readonly sent: number;
  /** Statements accepted but not yet written. */
  readonly queued: number;
  /** SQL texts in the statement cache (prepared or seen once). */
  readonly cachedStatements: number;
  /** Transaction status of the last ReadyForQuery: I, T or E. */
  readonly txStatus: string;
}

/** Terminate and close the socket. */
export class CloseRequest {}

/** Cast by the handle when a context's signal aborts: cancel or drop that request's statement. */
export class AbortRequest {
  constructor(
    readonly request: object,
    readonly reason: unknown,
  ) {}
}
