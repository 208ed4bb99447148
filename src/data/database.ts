/**
 * The one interface both backends implement. Application code holds a `Database` and never asks
 * which driver is underneath.
 */
import type { DataContext } from './context.js';
import type { Backend, Result, Row, Value } from './values.js';

/** Default cap on rows one `query` may return; past it a `TooManyRows` points to `stream()`. */
export const DEFAULT_MAX_ROWS = 10_000;
/** Bound parameters per statement. */
export const MAX_PARAMETERS = 1024;
/** A row (or a parameter, or a message) larger than this is refused. */
export const MAX_ROW_BYTES = 64 * 1024 * 1024;

export interface QueryOptions {
  /** Rows this call may return (default 10,000); use `stream()` beyond. */
  readonly maxRows?: number;
  /**
   * `false`: run as a one-off statement, never from or into a connection's prepared-statement cache,
   * so it gets a fresh plan and fresh parameter types (after DDL that changed a column's type, say).
   */
  readonly prepare?: boolean;
  /**
   * Postgres, when the connection is lost with the statement in flight: `true` says it only reads,
   * so the failure is a retryable ConnectionLost; `false` says it may write (OutcomeUnknown). Unset,
   * the text decides, and only a statement that certainly reads (no calls but known
   * side-effect-free functions) counts as a read.
   */
  readonly readOnly?: boolean;
}

export interface QueryManyOptions extends QueryOptions {
  /**
   * `false`: resolve with the totals (ManyTotals) rather than a Result per row. A bulk load rarely
   * reads a result per row; building (and on SQLite, sending back) one per row is a good part of
   * its cost. Rows a statement returns (RETURNING) are then dropped.
   */
  readonly results?: boolean;
}

/** What `queryMany(sql, rows, ctx, { results: false })` resolves with. */
export interface ManyTotals {
  /** Rows run: one per row given. */
  readonly count: number;
  /** Rows the statement affected, summed over every run. */
  readonly affected: number;
}

export interface StreamOptions {
  /** Rows fetched per round trip (default 1,000). */
  readonly batchSize?: number;
}

/** Anything statements can run on: a database, a transaction, a pinned session. */
export interface Queryable {
  readonly backend: Backend;
  query<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: QueryOptions): Promise<Result<R>>;
  /** A statement prepared once and run many times with different values. */
  prepare<R extends Row = Row>(sql: string, ctx?: DataContext): Promise<PreparedStatement<R>>;
  /** Rows of a large result, fetched in batches through a cursor; breaking out of the loop closes it. */
  stream<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: StreamOptions): AsyncIterable<R>;
}

export interface PreparedStatement<R extends Row = Row> {
  readonly sql: string;
  query(params?: readonly Value[], ctx?: DataContext, options?: QueryOptions): Promise<Result<R>>;
  /** Frees the statement on the server; later calls prepare it again. */
  close(): Promise<void>;
}

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

export interface TransactionOptions {
  /** Postgres: READ COMMITTED unless asked. SQLite transactions are always serializable. */
  readonly isolation?: IsolationLevel;
  readonly readOnly?: boolean;
  readonly ctx?: DataContext;
}

/** Work inside a transaction. `transaction` again nests with a savepoint. */
export interface Transaction extends Queryable {
  /** Nesting depth: 1 for the outer transaction, 2 for its first savepoint, ... */
  readonly depth: number;
  transaction<T>(fn: (tx: Transaction) => Promise<T>, options?: { readonly ctx?: DataContext }): Promise<T>;
}

export interface DatabaseHealth {
  readonly healthy: boolean;
  /** Why not, when not: the last connect error, say. */
  readonly reason?: string;
  readonly connections: number;
  readonly idle: number;
  readonly waiting: number;
}

export interface Database extends Queryable {
  ping(ctx?: DataContext): Promise<void>;
  /**
   * Runs `fn` in a transaction on one pinned connection: commits when its promise resolves, rolls
   * back when it rejects (and rethrows). Serialization failures surface as retryable errors; the
   * layer never retries user transactions itself.
   */
  transaction<T>(fn: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Runs `fn` with one connection pinned for its whole duration, for session state (SET, LISTEN,
   * advisory locks, temporary tables) that transaction pooling would otherwise lose.
   */
  session<T>(fn: (session: Queryable) => Promise<T>, ctx?: DataContext): Promise<T>;
  health(): DatabaseHealth;
  /**
   * Runs `sql` once per row of `rows`, in order and atomically (one transaction: every row or
   * none), with one promise for the whole batch; the results are in row order. The bulk path: on
   * SQLite the rows travel to the worker in one batch, on Postgres the executes are pipelined.
   * With `{ results: false }` it resolves with the totals instead (ManyTotals).
   */
  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryManyOptions & { readonly results?: true }): Promise<Result<R>[]>;
  queryMany(sql: string, rows: readonly (readonly Value[])[], ctx: DataContext | undefined, options: QueryManyOptions & { readonly results: false }): Promise<ManyTotals>;
  close(): Promise<void>;
}
