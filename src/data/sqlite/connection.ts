/**
 * One SQLite worker handle as a `DriverConnection`: what a transaction (runTransaction), a pinned
 * session or a pinned read runs on. It is bound to the worker generation it was pinned on, so after
 * the thread restarts it reports itself not `open` and its statements fail with ConnectionLost
 * instead of running, outside the transaction they belonged to, on the new handle.
 */
import type { DataContext } from '../context.js';
import type { ManyTotals, PreparedStatement, QueryManyOptions, QueryOptions, StreamOptions } from '../database.js';
import type { DriverConnection } from '../driver.js';
import type { Result, Row, Value } from '../values.js';
import type { WorkerChannel } from './channel.js';
import type { Binding, Engine } from './engine.js';
import type { StatementMode } from './faults.js';

export class SqliteConnection implements DriverConnection {
  readonly backend = 'sqlite' as const;
  readonly ended: Promise<unknown>;

  constructor(
    readonly engine: Engine,
    readonly channel: WorkerChannel,
    readonly binding: Binding,
    readonly mode: StatementMode,
  ) {
    // Unbound, it lasts as long as the channel; bound, as long as the worker generation it was pinned on.
    this.ended = binding.generation === 0 ? channel.closed : channel.ended(binding.generation);
  }

  get inFlight(): number {
    return this.channel.pending;
  }

  get open(): boolean {
    const { channel, binding } = this;
    return !this.engine.closed && channel.attached && (binding.generation === 0 || binding.generation === channel.generation);
  }

  query<R extends Row = Row>(sql: string, params: readonly Value[] | undefined, ctx: DataContext | undefined, options?: QueryOptions): Promise<Result<R>> {
    return this.engine.query<R>(this.channel, this.binding, this.mode, sql, params, ctx, options);
  }

  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx: DataContext | undefined, options?: QueryManyOptions): Promise<Result<R>[] | ManyTotals> {
    return this.engine.queryMany<R>(this.channel, this.binding, this.mode, sql, rows, ctx, options);
  }

  async prepare<R extends Row = Row>(sql: string, ctx: DataContext | undefined): Promise<PreparedStatement<R>> {
    const { statement } = await this.engine.prepare<R>(
      this.channel,
      this.binding,
      sql,
      ctx,
      (text, params, queryCtx, options) => this.query<R>(text, params, queryCtx, options),
      (text) => this.engine.unprepare(this.channel, text),
    );
    return statement;
  }

  stream<R extends Row = Row>(sql: string, params: readonly Value[] | undefined, ctx: DataContext | undefined, options?: StreamOptions): AsyncIterable<R> {
    return this.engine.stream<R>(this.channel, this.binding, this.mode, sql, params, ctx, options);
  }

  ping(ctx: DataContext | undefined): Promise<void> {
    return this.engine.ping(this.channel, this.binding, ctx);
  }

  /** The handle belongs to the database, which closes it; a pinned view has nothing of its own to close. */
  async close(): Promise<void> {}
}
