/**
 * What a pool needs of a connection. The Postgres connection actor's handle and the SQLite worker
 * handles implement it; `Pool` and `Transaction` are written once against it.
 */
import type { DataContext } from './context.js';
import type { PreparedStatement, QueryOptions, StreamOptions } from './database.js';
import type { Backend, Result, Row, Value } from './values.js';

export interface DriverConnection {
  readonly backend: Backend;
  /** Statements sent and not yet answered (pipelining puts several on one connection). */
  readonly inFlight: number;
  /** False once the connection is lost or closed; the pool drops it. */
  readonly open: boolean;
  /** Settles when the connection ends (lost or closed), with why. Never rejects. */
  readonly ended: Promise<unknown>;
  query<R extends Row = Row>(sql: string, params: readonly Value[] | undefined, ctx: DataContext | undefined, options?: QueryOptions): Promise<Result<R>>;
  prepare<R extends Row = Row>(sql: string, ctx: DataContext | undefined): Promise<PreparedStatement<R>>;
  stream<R extends Row = Row>(sql: string, params: readonly Value[] | undefined, ctx: DataContext | undefined, options?: StreamOptions): AsyncIterable<R>;
  ping(ctx: DataContext | undefined): Promise<void>;
  close(): Promise<void>;
}

/** Opens one connection; rejects with a DbError (ConnectFailed, AuthFailed, ...). */
export type Connector<C extends DriverConnection = DriverConnection> = (ctx: DataContext | undefined) => Promise<C>;
