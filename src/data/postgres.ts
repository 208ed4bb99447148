/**
 * `createPostgresPool`: the Postgres `Database`. Connection actors run under a supervisor of the
 * pool's own (temporary children: a lost connection is replaced by the pool, with backoff, rather
 * than restarted into an outage until the supervisor gives up); statements outside transactions
 * are pipelined on shared connections; transactions, cursors, COPY and sessions pin one.
 */
import type { Registry } from 'prom-client';
import type { ActorRuntime, Ref } from '../actors/index.js';
import { StartFailed, Supervisor, type ChildSpec, type SupervisorSpec } from '../behaviours/index.js';
import type { Logger } from '../telemetry/index.js';
import type { DataContext } from './context.js';
import type {
  Database,
  DatabaseHealth,
  ManyTotals,
  PreparedStatement,
  QueryManyOptions,
  QueryOptions,
  Queryable,
  StreamOptions,
  Transaction,
  TransactionOptions,
} from './database.js';
import { refuseUnknownKeys } from './option-keys.js';
import { otherDatabase } from './tenants.js';
import { ConnectFailed, InvalidDataConfig, PoolClosed, SessionStateRefused } from './errors.js';
import { connectPostgres, PgConnection, resolvePgConfig, type CopyInStream, type CopyOutStream, type NotificationHandler, type PgConfig } from './pg/index.js';
import { Pool, type ReadyOptions } from './pool.js';
import { POOL_DEFAULTS, resolvePoolConfig, type PoolConfig } from './pool-config.js';
import { PG_CONFIG_KEYS, postgresConfig, type PostgresSource } from './postgres-config.js';
import { PostgresListener, type ListenOptions } from './postgres-listener.js';
import { isReadOnlySql } from './pg/classify.js';
import { sessionStateOf } from './pg/session-state.js';
import { POSTGRES_DIALECT, runTransaction } from './transaction.js';
import { inTransactionOf, refusedInOwnTransaction } from './transaction-scope.js';
import type { Result, Row, Value } from './values.js';

export interface PostgresPoolConfig extends Partial<PgConfig>, PoolConfig, PostgresSource {
  /** Names the pool in metrics, logs and its supervisor's registered name (`molo.pool.<name>`). */
  readonly name?: string;
  readonly logger?: Logger;
  readonly metrics?: Registry;
}

let poolCounter = 0;

/** A connection that could not be opened, handed back from its start (as `ignore`) to the pool's connector. */
class FailedAttempt {
  constructor(readonly error: unknown) {}
}

/** The keys a pool configuration may hold: a misspelt one (`username`, `db`) is refused by name. */
const POOL_KEYS = new Set<string>([...Object.keys(POOL_DEFAULTS), ...PG_CONFIG_KEYS, 'url', 'env', 'name', 'logger', 'metrics']);

/** What other clients call some fields, for the error that names a misspelt one. */
const ALIASES: Readonly<Record<string, string>> = {
  hostname: 'host',
  username: 'user',
  db: 'database',
  dbname: 'database',
  pass: 'password',
  connectionstring: 'url',
  uri: 'url',
  connectiontimeoutmillis: 'connectTimeoutMs',
  application_name: 'applicationName',
  sslmode: "ssl, or url '?sslmode='",
};

/**
 * Opens a pool (its first connection before resolving) and returns the Postgres `Database`.
 *
 * `config` is an object, a `postgres://` URL, or nothing: see `postgresConfig` for where each
 * field comes from (object, URL or `DATABASE_URL`, `PG*` variables, defaults). The whole
 * configuration is checked before anything starts (InvalidDataConfig naming the field); a first
 * connection refused for good (AuthFailed, an unknown database) rejects at once. A server that is
 * down does not: the pool keeps trying, `ready()` waits for it, and a caller that cannot get a
 * connection learns the last attempt's reason (ConnectFailed).
 */
function assemblePostgres(system: ActorRuntime, config: PostgresPoolConfig | string | undefined): { db: PostgresDatabase; pool: Pool<PgConnection>; connections: ConnectionSupervisor } {
  if (config !== undefined && typeof config === 'object' && config !== null) {
    for (const key of Object.keys(config)) {
      if (POOL_KEYS.has(key)) continue;
      const alias = ALIASES[key.toLowerCase()];
      throw new InvalidDataConfig(`pool.${key}`, alias === undefined ? 'unknown option' : `unknown option; did you mean ${alias}?`);
    }
  }
  const resolved = postgresConfig(config);
  const name = resolved.name ?? `pg${++poolCounter}`;
  if (typeof name !== 'string' || !/^[\w.-]{1,64}$/.test(name)) throw new InvalidDataConfig('pool.name', 'letters, digits, _ . - only, at most 64');
  const { min, max, acquireTimeoutMs, maxWaiters, idleTimeoutMs, maxLifetimeMs, probeAfterIdleMs, reconnectInitialMs, reconnectMaxMs, reapIntervalMs, ...rest } = resolved;
  const { name: _name, logger, metrics, ...pg } = rest;
  const poolConfig: PoolConfig = { min, max, acquireTimeoutMs, maxWaiters, idleTimeoutMs, maxLifetimeMs, probeAfterIdleMs, reconnectInitialMs, reconnectMaxMs, reapIntervalMs };
  // Up front, so a bad field is named now rather than surfacing as a failed connection later.
  resolvePoolConfig(poolConfig);
  const { database } = resolvePgConfig(pg);
  const connections = new ConnectionSupervisor(system, {
    strategy: 'simple_one_for_one',
    children: [
      {
        id: 'connection',
        restart: 'temporary',
        shutdown: 5_000,
        start: async ({ parent, args }) => {
          try {
            const conn = await connectPostgres(system, { ...pg, metrics }, args[0] as DataContext | undefined, { link: parent });
            return { ref: conn.ref, extra: conn };
          } catch (error) {
            // A failed attempt is the pool's to retry and to report (one warning per outage, with its
            // backoff), so it is OTP's `ignore` here: the supervisor logs no start_error per reconnect.
            return { ref: undefined, extra: new FailedAttempt(error) };
          }
        },
      },
    ],
  }, `molo.pool.${name}`);
  const pool = new Pool<PgConnection>({
    name,
    clock: system.clock,
    config: poolConfig,
    metrics,
    logger,
    connector: async (connectCtx) => {
      const supervisor = connections.ref;
      // Between a crash of the connections' supervisor and its restart by the application's tree: an attempt that failed, retried with backoff.
      if (supervisor === undefined || !system.isAlive(supervisor)) throw new ConnectFailed(`the connections' supervisor of pool ${name} is not running`);
      let started;
      try {
        started = await Supervisor.startChildWithExtra(system, supervisor, [connectCtx]);
      } catch (error) {
        // The supervisor wraps a start's error; the pool decides (and callers read) by the connection's own.
        throw error instanceof StartFailed && error.reason instanceof Error ? error.reason : error;
      }
      // The pool decides by the connection's own error (retryable or not) and keeps it as the cause.
      if (started.extra instanceof FailedAttempt) throw started.extra.error;
      if (started.ref === undefined || !(started.extra instanceof PgConnection)) throw new Error('connection supervisor returned no connection');
      return started.extra;
    },
  });
  const db = new PostgresDatabase(system, pool, connections, logger, database);
  return { db, pool, connections };
}

/**
 * The supervisor of a pool's connection actors. `createPostgresPool` starts it on its own; a
 * database from `postgresChild` has it started (and restarted) by the application's tree, each
 * start a new supervisor the pool's connector then uses.
 */
class ConnectionSupervisor {
  ref: Ref | undefined = undefined;
  constructor(
    readonly system: ActorRuntime,
    readonly spec: SupervisorSpec,
    readonly name: string,
  ) {}

  async start(link?: Ref): Promise<Ref> {
    this.ref = await Supervisor.start(this.system, this.spec, { name: this.name, ...(link === undefined ? {} : { link }) });
    return this.ref;
  }
}

export async function createPostgresPool(system: ActorRuntime, config?: PostgresPoolConfig | string, ctx?: DataContext): Promise<PostgresDatabase> {
  const { db, pool, connections } = assemblePostgres(system, config);
  const supervisor = await connections.start();
  try {
    await pool.start(ctx);
  } catch (error) {
    await Supervisor.stop(system, supervisor).catch(() => undefined);
    throw error;
  }
  return db;
}

/**
 * A Postgres database as a child of the application's tree (as Ecto's Repo or a pg-pool under a
 * supervisor): the child is the pool's connections' supervisor, shown in `/tree`, stopped in order
 * with its siblings, and started again by the tree's rules when it dies, after which the pool
 * reconnects through the new one. `database` is usable at once; calls made before the child has
 * started wait for the first connection like any checkout (`acquireTimeoutMs`). A first connection
 * refused for good (AuthFailed, an unknown database) fails the child's start.
 */
export function postgresChild(
  system: ActorRuntime,
  config?: PostgresPoolConfig | string,
  options: { readonly id?: string } = {},
): ChildSpec & { readonly database: PostgresDatabase } {
  refuseUnknownKeys('postgresChild', options, ['id']);
  const { db, pool, connections } = assemblePostgres(system, config);
  let started = false;
  const spec: ChildSpec = {
    id: options.id ?? 'database',
    type: 'supervisor',
    start: async ({ parent }) => {
      const ref = await connections.start(parent);
      if (!started) {
        started = true;
        await pool.start();
      } else {
        pool.reconnect();
      }
      return ref;
    },
  };
  // Not enumerable: it rides along for the caller, it is not a child-spec key (those are checked).
  return Object.defineProperty(spec, 'database', { value: db, enumerable: false }) as ChildSpec & { readonly database: PostgresDatabase };
}

export class PostgresDatabase implements Database {
  readonly backend = 'postgres' as const;
  readonly #listener: PostgresListener;
  #closed = false;

  constructor(
    readonly system: ActorRuntime,
    readonly pool: Pool<PgConnection>,
    readonly connections: { readonly ref: Ref | undefined },
    logger: Logger | undefined,
    /** The database this pool serves: a call whose `ctx.database` names another is refused (DatabaseNotRouted). */
    readonly database: string,
  ) {
    this.#listener = new PostgresListener(pool, logger, system.clock);
  }

  query<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: QueryOptions): Promise<Result<R>> {
    const elsewhere = otherDatabase(ctx, this.database);
    if (elsewhere !== undefined) return Promise.reject(elsewhere);
    // Session state would stay on the shared connection for whoever runs on it next (04 BP-2).
    const stateful = sessionStateOf(sql);
    if (stateful !== undefined) return Promise.reject(new SessionStateRefused(stateful));
    const refused = refusedInOwnTransaction(this, 'a write', () => options?.readOnly !== true && !isReadOnlySql(sql));
    if (refused !== undefined) return Promise.reject(refused);
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
    const lease = await this.#acquire(ctx);
    try {
      yield* lease.conn.stream<R>(sql, params, ctx, options);
    } finally {
      lease.release();
    }
  }

  ping(ctx?: DataContext): Promise<void> {
    const elsewhere = otherDatabase(ctx, this.database);
    if (elsewhere !== undefined) return Promise.reject(elsewhere);
    return this.pool.run(ctx, (c) => c.ping(ctx));
  }

  /** A checkout for a call's own connection, refused when its `ctx.database` names another database. */
  #acquire(ctx: DataContext | undefined): ReturnType<Pool<PgConnection>['acquire']> {
    const elsewhere = otherDatabase(ctx, this.database);
    return elsewhere === undefined ? this.pool.acquire(ctx) : Promise.reject(elsewhere);
  }

  /** Every execute issued at once on one leased connection inside a transaction: the connection pipelines them. */
  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryManyOptions & { readonly results?: true }): Promise<Result<R>[]>;
  queryMany(sql: string, rows: readonly (readonly Value[])[], ctx: DataContext | undefined, options: QueryManyOptions & { readonly results: false }): Promise<ManyTotals>;
  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryManyOptions): Promise<Result<R>[] | ManyTotals> {
    const results = this.transaction((tx) => issueEach(rows, (params) => tx.query<R>(sql, params, ctx, options)), { ctx });
    return options?.results === false ? results.then(totalsOf) : results;
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const refused = refusedInOwnTransaction(this, 'a write transaction', () => options.readOnly !== true);
    if (refused !== undefined) throw refused;
    const lease = await this.#acquire(options.ctx);
    try {
      return await runTransaction(lease.conn, POOLED_DIALECT, (tx) => inTransactionOf(this, () => fn(tx)), options);
    } finally {
      lease.release();
    }
  }

  /**
   * One connection for `fn` alone, where session state (SET, LISTEN, advisory locks, PREPARE,
   * temporary tables) is allowed. It must not leak to the callers the pool serves next, so before
   * the connection goes back to the pool an open transaction is rolled back and `DISCARD ALL`
   * resets the session (settings, prepared statements, listens, advisory locks, temporary tables,
   * held cursors); the connection's own statement cache is cleared with it. When the reset fails
   * (a lost connection, say) the connection is closed instead and the pool opens a fresh one.
   */
  async session<T>(fn: (session: Queryable) => Promise<T>, ctx?: DataContext): Promise<T> {
    const lease = await this.#acquire(ctx);
    try {
      return await fn(lease.conn);
    } finally {
      await resetSession(lease.conn).catch(() => lease.conn.close().catch(() => undefined));
      lease.release();
    }
  }

  /**
   * LISTEN on a connection the pool keeps for notifications. After a reconnect every channel is
   * listened to again and `onResync` runs, since notifications sent in between are lost.
   */
  /**
   * A child spec for the application's tree whose actor drives LISTEN's recovery: after the listening
   * connection is lost, the retries that take a new one and LISTEN again are messages in its mailbox.
   * Visible in `/tree`, restarted by the tree's rules; until it starts, the retries run on the clock.
   */
  listenerChild(id = 'pg-listener'): ChildSpec {
    return this.#listener.childSpec(id);
  }

  listen(channel: string, handler: NotificationHandler, options: ListenOptions = {}): Promise<() => Promise<void>> {
    return this.#listener.listen(channel, handler, options);
  }

  /** NOTIFY through the pool (a bound payload: `SELECT pg_notify($1, $2)`). */
  async notify(channel: string, payload = '', ctx?: DataContext): Promise<void> {
    await this.query('SELECT pg_notify($1, $2)', [channel, payload], ctx);
  }

  /** COPY ... FROM STDIN: write rows to the stream; the connection is pinned until it finishes. */
  async copyFrom(sql: string, ctx?: DataContext): Promise<CopyInStream> {
    const lease = await this.#acquire(ctx);
    const stream = lease.conn.copyFrom(sql, ctx);
    stream.once('close', () => lease.release());
    return stream;
  }

  /** COPY ... TO STDOUT as a readable stream; the connection is pinned until it ends. */
  async copyTo(sql: string, ctx?: DataContext): Promise<CopyOutStream> {
    const lease = await this.#acquire(ctx);
    const stream = lease.conn.copyTo(sql, ctx);
    stream.once('close', () => lease.release());
    return stream;
  }

  health(): DatabaseHealth {
    return this.pool.health();
  }

  /**
   * Resolves once a connection is open; rejects with the reason (AuthFailed, ConnectFailed naming
   * the last attempt's cause, ...) otherwise. Await it at startup to fail with the real reason.
   */
  ready(options?: ReadyOptions): Promise<void> {
    return this.pool.ready(options);
  }

  /** The supervisor of this pool's connection actors (a new one after the application's tree restarted it). */
  get supervisor(): Ref {
    const ref = this.connections.ref;
    if (ref === undefined) throw new PoolClosed();
    return ref;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#listener.close();
    await this.pool.close();
    const ref = this.connections.ref;
    if (ref !== undefined) await Supervisor.stop(this.system, ref).catch(() => undefined);
  }
}

/**
 * A pooled transaction's connection serves other callers after COMMIT: session state set inside
 * it (a plain SET outlives the transaction) is refused as on the shared path.
 */
const POOLED_DIALECT = {
  ...POSTGRES_DIALECT,
  refuse: (sql: string): SessionStateRefused | undefined => {
    const stateful = sessionStateOf(sql);
    return stateful === undefined ? undefined : new SessionStateRefused(stateful, 'a pooled connection after this transaction');
  },
};

/** Rolls back what a session left open and discards its session state (the statement cache goes with it: responses.ts). */
async function resetSession(conn: PgConnection): Promise<void> {
  if (!conn.open) throw new Error('connection closed');
  // Outside a transaction ROLLBACK only warns; DISCARD ALL may not run inside one.
  await conn.query('ROLLBACK', undefined, { timeoutMs: 5_000 });
  await conn.query('DISCARD ALL', undefined, { timeoutMs: 5_000 });
}

function totalsOf(results: readonly Result[]): ManyTotals {
  let affected = 0;
  for (const result of results) affected += result.affected;
  return { count: results.length, affected };
}

/** One statement per row, all issued before any is awaited. */
function issueEach<T>(rows: readonly (readonly Value[])[], run: (params: readonly Value[]) => Promise<T>): Promise<T[]> {
  const pending = new Array<Promise<T>>(rows.length);
  for (let i = 0; i < rows.length; i++) pending[i] = run(rows[i]!);
  return Promise.all(pending);
}
