/**
 * `createPostgresPool`: the Postgres `Database`. Connection actors run under a supervisor of the
 * pool's own (temporary children: a lost connection is replaced by the pool, with backoff, rather
 * than restarted into an outage until the supervisor gives up); statements outside transactions
 * are pipelined on shared connections; transactions, cursors, COPY and sessions pin one.
 */
import type { Registry } from 'prom-client';
import type { ActorRuntime, Ref } from '../actors/index.js';
import { Supervisor } from '../behaviours/index.js';
import type { Logger } from '../telemetry/index.js';
import type { DataContext } from './context.js';
import type {
  Database,
  DatabaseHealth,
  PreparedStatement,
  QueryOptions,
  Queryable,
  StreamOptions,
  Transaction,
  TransactionOptions,
} from './database.js';
import { InvalidDataConfig } from './errors.js';
import { connectPostgres, PgConnection, type CopyInStream, type CopyOutStream, type NotificationHandler, type PgConfig } from './pg/index.js';
import { Pool } from './pool.js';
import type { PoolConfig } from './pool-config.js';
import { PostgresListener, type ListenOptions } from './postgres-listener.js';
import { POSTGRES_DIALECT, runTransaction } from './transaction.js';
import type { Result, Row, Value } from './values.js';

export interface PostgresPoolConfig extends PgConfig, PoolConfig {
  /** Names the pool in metrics, logs and its supervisor's registered name (`molo.pool.<name>`). */
  readonly name?: string;
  readonly logger?: Logger;
  readonly metrics?: Registry;
}

let poolCounter = 0;

/** Opens a pool (min connections first) and returns the Postgres `Database`. */
export async function createPostgresPool(system: ActorRuntime, config: PostgresPoolConfig, ctx?: DataContext): Promise<PostgresDatabase> {
  const name = config.name ?? `pg${++poolCounter}`;
  if (!/^[\w.-]{1,64}$/.test(name)) throw new InvalidDataConfig('pool.name', 'letters, digits, _ . - only, at most 64');
  const { min, max, acquireTimeoutMs, maxWaiters, idleTimeoutMs, maxLifetimeMs, probeAfterIdleMs, reconnectInitialMs, reconnectMaxMs, reapIntervalMs, ...pg } = config;
  const poolConfig: PoolConfig = { min, max, acquireTimeoutMs, maxWaiters, idleTimeoutMs, maxLifetimeMs, probeAfterIdleMs, reconnectInitialMs, reconnectMaxMs, reapIntervalMs };
  const opened = new Map<string, PgConnection>();
  const supervisor = await Supervisor.start(
    system,
    {
      strategy: 'simple_one_for_one',
      children: [
        {
          id: 'connection',
          restart: 'temporary',
          shutdown: 5_000,
          start: async ({ parent, args }) => {
            const conn = await connectPostgres(system, pg, args[0] as DataContext | undefined, { link: parent });
            opened.set(String(conn.ref), conn);
            return conn.ref;
          },
        },
      ],
    },
    { name: `molo.pool.${name}` },
  );
  const pool = new Pool<PgConnection>({
    name,
    config: poolConfig,
    metrics: config.metrics,
    logger: config.logger,
    connector: async (connectCtx) => {
      const ref = await Supervisor.startChild(system, supervisor, [connectCtx]);
      const conn = opened.get(String(ref));
      opened.delete(String(ref));
      if (conn === undefined) throw new Error('connection supervisor returned no connection');
      return conn;
    },
  });
  const db = new PostgresDatabase(system, pool, supervisor, config.logger);
  try {
    await pool.start(ctx);
  } catch (error) {
    await Supervisor.stop(system, supervisor).catch(() => undefined);
    throw error;
  }
  return db;
}

export class PostgresDatabase implements Database {
  readonly backend = 'postgres' as const;
  readonly #listener: PostgresListener;
  #closed = false;

  constructor(
    readonly system: ActorRuntime,
    readonly pool: Pool<PgConnection>,
    /** The supervisor of this pool's connection actors. */
    readonly supervisor: Ref,
    logger: Logger | undefined,
  ) {
    this.#listener = new PostgresListener(pool, logger);
  }

  query<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: QueryOptions): Promise<Result<R>> {
    // The common case without a promise of our own: a shared connection and nobody waiting to lease one.
    const conn = this.pool.waiting === 0 ? this.pool.shared() : undefined;
    if (conn !== undefined) return conn.query<R>(sql, params, ctx, options);
    return this.pool.run(ctx, (c) => c.query<R>(sql, params, ctx, options));
  }

  /**
   * A statement for repeated use. Each connection prepares it on its second use (its statement
   * cache), so the same object runs prepared on whichever connection the pool picks.
   */
  async prepare<R extends Row = Row>(sql: string, _ctx?: DataContext): Promise<PreparedStatement<R>> {
    return {
      sql,
      query: (params, ctx, options) => this.query<R>(sql, params, ctx, options),
      close: async () => undefined,
    };
  }

  /** A cursor pins one connection until the loop ends. */
  async *stream<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: StreamOptions): AsyncGenerator<R, void, undefined> {
    const lease = await this.pool.acquire(ctx);
    try {
      yield* lease.conn.stream<R>(sql, params, ctx, options);
    } finally {
      lease.release();
    }
  }

  ping(ctx?: DataContext): Promise<void> {
    return this.pool.run(ctx, (c) => c.ping(ctx));
  }

  /** Every execute issued at once on one leased connection inside a transaction: the connection pipelines them. */
  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryOptions): Promise<Result<R>[]> {
    return this.transaction((tx) => issueEach(rows, (params) => tx.query<R>(sql, params, ctx, options)), { ctx });
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const lease = await this.pool.acquire(options.ctx);
    try {
      return await runTransaction(lease.conn, POSTGRES_DIALECT, fn, options);
    } finally {
      lease.release();
    }
  }

  /**
   * One connection for `fn` alone. Its session state (SET, temporary tables, advisory locks,
   * LISTEN) must not leak to the callers the pool serves next, so the connection is closed
   * afterwards and the pool opens a fresh one.
   */
  async session<T>(fn: (session: Queryable) => Promise<T>, ctx?: DataContext): Promise<T> {
    const lease = await this.pool.acquire(ctx);
    try {
      return await fn(lease.conn);
    } finally {
      await lease.conn.close().catch(() => undefined);
      lease.release();
    }
  }

  /**
   * LISTEN on a connection the pool keeps for notifications. After a reconnect every channel is
   * listened to again and `onResync` runs, since notifications sent in between are lost.
   */
  listen(channel: string, handler: NotificationHandler, options: ListenOptions = {}): Promise<() => Promise<void>> {
    return this.#listener.listen(channel, handler, options);
  }

  /** NOTIFY through the pool (a bound payload: `SELECT pg_notify($1, $2)`). */
  async notify(channel: string, payload = '', ctx?: DataContext): Promise<void> {
    await this.query('SELECT pg_notify($1, $2)', [channel, payload], ctx);
  }

  /** COPY ... FROM STDIN: write rows to the stream; the connection is pinned until it finishes. */
  async copyFrom(sql: string, ctx?: DataContext): Promise<CopyInStream> {
    const lease = await this.pool.acquire(ctx);
    const stream = lease.conn.copyFrom(sql, ctx);
    stream.once('close', () => lease.release());
    return stream;
  }

  /** COPY ... TO STDOUT as a readable stream; the connection is pinned until it ends. */
  async copyTo(sql: string, ctx?: DataContext): Promise<CopyOutStream> {
    const lease = await this.pool.acquire(ctx);
    const stream = lease.conn.copyTo(sql, ctx);
    stream.once('close', () => lease.release());
    return stream;
  }

  health(): DatabaseHealth {
    return this.pool.health();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#listener.close();
    await this.pool.close();
    await Supervisor.stop(this.system, this.supervisor).catch(() => undefined);
  }
}

/** One statement per row, all issued before any is awaited. */
function issueEach<T>(rows: readonly (readonly Value[])[], run: (params: readonly Value[]) => Promise<T>): Promise<T[]> {
  const pending = new Array<Promise<T>>(rows.length);
  for (let i = 0; i < rows.length; i++) pending[i] = run(rows[i]!);
  return Promise.all(pending);
}
