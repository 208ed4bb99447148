/**
 * Spans for data calls through `@opentelemetry/api`: `traced(db)` wraps a `Database` so each
 * statement and each transaction opens a span. Without a registered SDK (or when a span is not
 * sampled) `startSpan` returns undefined after one property read and the call runs unwrapped, so
 * tracing costs nothing until someone records it. Spans carry the SQL text, never its values.
 */
import { RuntimeTracer } from '../telemetry/index.js';
import type { DataContext } from './context.js';
import type { Database, DatabaseHealth, ManyTotals, PreparedStatement, QueryManyOptions, QueryOptions, Queryable, StreamOptions, Transaction, TransactionOptions } from './database.js';
import type { Result, Row, Value } from './values.js';

export const DataSpanName = {
  /** One statement, from the call to its result or error. */
  query: 'molo.db.query',
  /** A whole transaction, from BEGIN to COMMIT or ROLLBACK. */
  transaction: 'molo.db.transaction',
} as const;

/** `db` with a span around every statement and transaction. */
export function traced(db: Database, tracer: RuntimeTracer = new RuntimeTracer()): Database {
  return new TracedDatabase(db, tracer);
}

class TracedDatabase implements Database {
  readonly backend: Database['backend'];
  readonly #system: string;

  constructor(
    private readonly db: Database,
    private readonly tracer: RuntimeTracer,
  ) {
    this.backend = db.backend;
    this.#system = db.backend === 'postgres' ? 'postgresql' : 'sqlite';
  }

  query<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: QueryOptions): Promise<Result<R>> {
    const span = this.tracer.startSpan(DataSpanName.query, this.#attributes(sql, ctx));
    const result = this.db.query<R>(sql, params, ctx, options);
    if (span === undefined) return result;
    return result.then(
      (value) => {
        span.end(undefined, { 'db.rows': value.rows.length, 'db.affected': value.affected });
        return value;
      },
      (error: unknown) => {
        span.end(error);
        throw error;
      },
    );
  }

  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryManyOptions & { readonly results?: true }): Promise<Result<R>[]>;
  queryMany(sql: string, rows: readonly (readonly Value[])[], ctx: DataContext | undefined, options: QueryManyOptions & { readonly results: false }): Promise<ManyTotals>;
  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryManyOptions): Promise<Result<R>[] | ManyTotals> {
    const span = this.tracer.startSpan(DataSpanName.query, this.#attributes(sql, ctx));
    const results = this.db.queryMany<R>(sql, rows, ctx, options as QueryManyOptions & { readonly results?: true }) as Promise<Result<R>[] | ManyTotals>;
    if (span === undefined) return results;
    return results.then(
      (value) => {
        span.end(undefined, Array.isArray(value) ? { 'db.rows': value.length } : { 'db.rows': value.count, 'db.affected': value.affected });
        return value;
      },
      (error: unknown) => {
        span.end(error);
        throw error;
      },
    );
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T> {
    const span = this.tracer.startSpan(DataSpanName.transaction, this.#attributes(undefined, options?.ctx));
    if (span === undefined) return this.db.transaction(fn, options);
    try {
      const value = await this.db.transaction(fn, options);
      span.end();
      return value;
    } catch (error) {
      span.end(error);
      throw error;
    }
  }

  prepare<R extends Row = Row>(sql: string, ctx?: DataContext): Promise<PreparedStatement<R>> {
    return this.db.prepare<R>(sql, ctx);
  }

  stream<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: StreamOptions): AsyncIterable<R> {
    return this.db.stream<R>(sql, params, ctx, options);
  }

  ping(ctx?: DataContext): Promise<void> {
    return this.db.ping(ctx);
  }

  session<T>(fn: (session: Queryable) => Promise<T>, ctx?: DataContext): Promise<T> {
    return this.db.session(fn, ctx);
  }

  health(): DatabaseHealth {
    return this.db.health();
  }

  close(): Promise<void> {
    return this.db.close();
  }

  #attributes(sql: string | undefined, ctx: DataContext | undefined): Record<string, unknown> {
    const attributes: Record<string, unknown> = { 'db.system': this.#system };
    if (sql !== undefined) attributes['db.statement'] = sql;
    if (ctx?.correlationId !== undefined) attributes['molo.correlation_id'] = ctx.correlationId;
    return attributes;
  }
}
