/**
 * The one function every ORM statement runs through, and the scope it runs in (database or
 * transaction, context, pending write events). This is where the Healer hooks in: a failed
 * statement is offered to `healer.heal`, and retried once when it returns a record. Inside a
 * Postgres transaction the first error aborts the whole transaction, so with a healer configured
 * each statement runs behind its own savepoint, rolled back to before the heal.
 */
import type { DataContext } from '../context.js';
import type { Database, Queryable, QueryOptions, Transaction } from '../database.js';
import type { Backend, Result, Row, Value } from '../values.js';
import type { Dialect } from './dialect.js';
import type { PendingEvent, WriteEventChannel } from './events.js';
import type { Logger } from '../../telemetry/index.js';
import type { OrmMetrics } from './metrics.js';
import type { HealContext, ModelMeta, OrmHealer } from './model.js';
import type { Oplog } from '../replication/oplog.js';

/** What every scope of one `Orm` shares. */
export interface OrmShared {
  readonly db: Database;
  readonly backend: Backend;
  readonly dialect: Dialect;
  readonly events: WriteEventChannel;
  readonly healer?: OrmHealer;
  /** Cap of rows `all()` returns. */
  readonly maxRows: number;
  /** The public `Orm` of a scope, handed to hooks (kept abstract so the write code needs no `Orm`). */
  readonly facade: (scope: Scope) => unknown;
  readonly metrics?: OrmMetrics;
  readonly logger?: Logger;
  /** Where replicated models' writes append their entries, in the writing transaction. */
  readonly oplog?: Oplog;
}

/** An explicit transaction's state: its id, the events waiting for COMMIT, the savepoint counter. */
export interface TxState {
  readonly txId: number;
  readonly handle: Transaction;
  readonly pending: PendingEvent[];
  savepoints: { next: number };
  /** Oplog entries appended in the whole transaction (savepoints share the outer count): the post-commit wake-up. */
  readonly appended: { n: number };
}

export interface Scope {
  readonly shared: OrmShared;
  /** The database, or the transaction when in one. */
  readonly q: Queryable;
  readonly tx?: TxState;
  readonly ctx?: DataContext;
}

/** A failed statement whose heal was tried: the error carries what was done. */
export interface HealedError {
  healRecord?: object;
}

/**
 * Not async: without a healer the driver's own promise is returned as it is. An async frame here
 * would add two promises and two microtask hops to every ORM statement that the raw client does
 * not pay (more with promise hooks on, inside a transaction).
 */
export function exec<R extends Row = Row>(scope: Scope, meta: ModelMeta, sql: string, params: readonly Value[], options?: QueryOptions): Promise<Result<R>> {
  const healer = scope.shared.healer;
  if (healer === undefined) {
    try {
      return scope.q.query<R>(sql, params, scope.ctx, options);
    } catch (error) {
      // A driver that throws synchronously (a bad option) still fails as a rejection, as before.
      return Promise.reject(error);
    }
  }
  return execHealing<R>(scope, healer, meta, sql, params, options);
}

async function execHealing<R extends Row>(scope: Scope, healer: OrmHealer, meta: ModelMeta, sql: string, params: readonly Value[], options?: QueryOptions): Promise<Result<R>> {
  const guarded = scope.tx !== undefined && scope.shared.backend === 'postgres';
  const run = (opts: QueryOptions | undefined): Promise<Result<R>> =>
    guarded ? behindSavepoint<R>(scope, sql, params, opts) : scope.q.query<R>(sql, params, scope.ctx, opts);
  try {
    return await run(options);
  } catch (error) {
    const context: HealContext = { backend: scope.shared.backend, model: meta, db: scope.q, inTransaction: scope.tx !== undefined, sql, params };
    const record = await healer.heal(error, context);
    if (record === undefined) throw error;
    const { metrics, logger } = scope.shared;
    // The retry bypasses the connection's statement cache: a cached plan would still carry the
    // column types the heal just widened (0A000, or a parameter refused as int4).
    try {
      const result = await run({ ...options, prepare: false });
      metrics?.heals.inc({ table: meta.table, outcome: 'ok' });
      return result;
    } catch (second) {
      if (typeof second === 'object' && second !== null) (second as HealedError).healRecord = record;
      metrics?.heals.inc({ table: meta.table, outcome: 'failed' });
      logger?.warn({ table: meta.table, healRecord: record, err: second }, 'orm: statement failed again after a heal');
      throw second;
    }
  }
}

/** The statement inside `SAVEPOINT`/`RELEASE`; on failure the transaction is rolled back to it, still usable. */
async function behindSavepoint<R extends Row>(scope: Scope, sql: string, params: readonly Value[], options?: QueryOptions): Promise<Result<R>> {
  const tx = scope.tx!;
  const name = `molo_heal_${tx.savepoints.next++}`;
  await scope.q.query(`SAVEPOINT ${name}`, undefined, scope.ctx);
  let result: Result<R>;
  try {
    result = await scope.q.query<R>(sql, params, scope.ctx, options);
  } catch (error) {
    await scope.q.query(`ROLLBACK TO SAVEPOINT ${name}`, undefined, scope.ctx);
    await scope.q.query(`RELEASE SAVEPOINT ${name}`, undefined, scope.ctx);
    throw error;
  }
  await scope.q.query(`RELEASE SAVEPOINT ${name}`, undefined, scope.ctx);
  return result;
}

/** Whether anyone listens: writes skip building events when no one does. */
export function listening(scope: Scope): boolean {
  return scope.shared.events.subscribers > 0;
}

/** Records write events: buffered until COMMIT in a transaction, published at once outside one. */
export function emit(scope: Scope, events: readonly PendingEvent[]): void {
  if (events.length === 0) return;
  if (scope.tx !== undefined) {
    for (const event of events) scope.tx.pending.push(event);
    return;
  }
  const channel = scope.shared.events;
  channel.publish(channel.beginTx(), events);
}

/**
 * Runs `fn` in a transaction of this scope: a new one (BEGIN; events published after COMMIT) or a
 * savepoint inside the current one (its events join the parent's when it succeeds, vanish when it
 * rolls back).
 */
export async function inTransaction<T>(scope: Scope, fn: (inner: Scope) => Promise<T>, options: { readonly isolation?: 'read committed' | 'repeatable read' | 'serializable'; readonly readOnly?: boolean } = {}): Promise<T> {
  const parent = scope.tx;
  if (parent !== undefined) {
    const pending: PendingEvent[] = [];
    const value = await parent.handle.transaction(
      (inner) => fn({ shared: scope.shared, q: inner, tx: { txId: parent.txId, handle: inner, pending, savepoints: parent.savepoints, appended: parent.appended }, ...(scope.ctx === undefined ? {} : { ctx: scope.ctx }) }),
      scope.ctx === undefined ? {} : { ctx: scope.ctx },
    );
    for (const event of pending) parent.pending.push(event);
    return value;
  }
  const channel = scope.shared.events;
  const txId = channel.beginTx();
  const pending: PendingEvent[] = [];
  const appended = { n: 0 };
  const value = await scope.shared.db.transaction(
    (handle) => fn({ shared: scope.shared, q: handle, tx: { txId, handle, pending, savepoints: { next: 0 }, appended }, ...(scope.ctx === undefined ? {} : { ctx: scope.ctx }) }),
    { ...options, ...(scope.ctx === undefined ? {} : { ctx: scope.ctx }) },
  );
  if (appended.n > 0) scope.shared.oplog?.committed(appended.n);
  channel.publish(txId, pending);
  return value;
}
