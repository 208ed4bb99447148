/**
 * Transactions on one pinned connection, written once for both backends: BEGIN, the caller's
 * function, then COMMIT when its promise resolves or ROLLBACK when it rejects. Nested scopes are
 * savepoints named `molo_sp_<depth>_<counter>`. Serialization failures surface as the server's
 * retryable DbError; the layer never retries a user transaction itself.
 */
import type { DataContext } from './context.js';
import type { PreparedStatement, QueryOptions, StreamOptions, Transaction, TransactionOptions } from './database.js';
import type { DriverConnection } from './driver.js';
import { TransactionStateError } from './errors.js';
import type { Backend, Result, Row, Value } from './values.js';

/** How a backend opens a transaction. */
export interface TransactionDialect {
  begin(options: TransactionOptions): string;
  /** An error for a statement the transaction's connection must not run (session state on a pooled one), or undefined. */
  refuse?(sql: string): Error | undefined;
}

export const POSTGRES_DIALECT: TransactionDialect = {
  begin: (options) =>
    `BEGIN ISOLATION LEVEL ${(options.isolation ?? 'read committed').toUpperCase()}${options.readOnly === true ? ' READ ONLY' : ''}`,
};

/** SQLite takes the write lock up front, so a transaction never fails half-way with SQLITE_BUSY on upgrade. */
export const SQLITE_DIALECT: TransactionDialect = { begin: () => 'BEGIN IMMEDIATE' };

export async function runTransaction<T>(
  conn: DriverConnection,
  dialect: TransactionDialect,
  fn: (tx: Transaction) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const ctx = options.ctx;
  await conn.query(dialect.begin(options), undefined, ctx);
  const tx = new PinnedTransaction(conn, 1, ctx, { next: 0 }, dialect.refuse);
  let value: T;
  try {
    value = await fn(tx);
  } catch (error) {
    tx.end();
    await rollbackQuietly(conn, 'ROLLBACK', ctx);
    throw error;
  }
  tx.end();
  const commit = await conn.query('COMMIT', undefined, ctx);
  // Postgres answers COMMIT of an aborted transaction with a ROLLBACK tag, not an error: a caller
  // that swallowed a failed statement must not believe its writes landed.
  if (commit.command === 'ROLLBACK') throw new TransactionStateError('the transaction was aborted by an earlier error; COMMIT rolled it back');
  return value;
}

/** A rollback whose own failure (the connection is gone, say) must not hide the caller's error. */
async function rollbackQuietly(conn: DriverConnection, sql: string, ctx: DataContext | undefined): Promise<void> {
  if (!conn.open) return;
  try {
    await conn.query(sql, undefined, ctx);
  } catch {
    // The server rolls back on its own when the session ends; the caller's error is the one to see.
  }
}

class PinnedTransaction implements Transaction {
  readonly backend: Backend;
  private active = true;

  constructor(
    private readonly conn: DriverConnection,
    readonly depth: number,
    private readonly ctx: DataContext | undefined,
    /** Shared by the whole transaction, so every savepoint name is unique within it. */
    private readonly savepoints: { next: number },
    private readonly refuse: ((sql: string) => Error | undefined) | undefined = undefined,
  ) {
    this.backend = conn.backend;
  }

  end(): void {
    this.active = false;
  }

  private check(): void {
    if (!this.active) throw new TransactionStateError(`transaction (depth ${this.depth}) used after it ended`);
  }

  query<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: QueryOptions): Promise<Result<R>> {
    this.check();
    const refused = this.refuse?.(sql);
    if (refused !== undefined) return Promise.reject(refused);
    return this.conn.query<R>(sql, params, ctx ?? this.ctx, options);
  }

  prepare<R extends Row = Row>(sql: string, ctx?: DataContext): Promise<PreparedStatement<R>> {
    this.check();
    return this.conn.prepare<R>(sql, ctx ?? this.ctx);
  }

  stream<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: StreamOptions): AsyncIterable<R> {
    this.check();
    return this.conn.stream<R>(sql, params, ctx ?? this.ctx, options);
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>, options: { readonly ctx?: DataContext } = {}): Promise<T> {
    this.check();
    const ctx = options.ctx ?? this.ctx;
    const depth = this.depth + 1;
    const name = `molo_sp_${depth}_${this.savepoints.next++}`;
    await this.conn.query(`SAVEPOINT ${name}`, undefined, ctx);
    const child = new PinnedTransaction(this.conn, depth, ctx, this.savepoints, this.refuse);
    let value: T;
    try {
      value = await fn(child);
    } catch (error) {
      child.end();
      await rollbackQuietly(this.conn, `ROLLBACK TO SAVEPOINT ${name}`, ctx);
      await rollbackQuietly(this.conn, `RELEASE SAVEPOINT ${name}`, ctx);
      throw error;
    }
    child.end();
    await this.conn.query(`RELEASE SAVEPOINT ${name}`, undefined, ctx);
    return value;
  }
}
