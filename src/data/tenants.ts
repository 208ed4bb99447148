/**
 * The tenant selector: `ctx.database` picks the database a call runs on. A plain pool serves one
 * database and refuses a selector naming another (`DatabaseNotRouted`), so a call meant for tenant B
 * can never run on tenant A's pool. `openTenantDatabases` is the router: one pool per database,
 * opened on first use through the application's `open`, at most `maxOpen` at once; past that the
 * least recently used pool with no call in flight is closed.
 */
import type { Registry } from 'prom-client';
import { unknownOptionKey } from '../actors/option-keys.js';
import { BACKGROUND, type DataContext } from './context.js';
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
import { DatabaseNotRouted, InvalidDataConfig, TenantPoolsExhausted } from './errors.js';
import type { Backend, Result, Row, Value } from './values.js';
import { prom } from '../telemetry/lazy-modules.js';
import type { Counter, Gauge } from 'prom-client';

/** `DatabaseNotRouted` when `ctx.database` names a database other than `served`; undefined otherwise. */
export function otherDatabase(ctx: DataContext | undefined, served: string, aliases: readonly string[] = []): DatabaseNotRouted | undefined {
  const requested = ctx?.database;
  if (requested === undefined || requested === served || aliases.includes(requested)) return undefined;
  return new DatabaseNotRouted(String(requested), served);
}

export const TENANT_DEFAULTS = { maxOpen: 16 } as const;
export const TENANT_CAPS = { maxOpen: 1_024 } as const;
/** A tenant name is an identifier, never a path or a URL: it reaches the application's `open`. */
const TENANT_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$/;

export interface TenantDatabasesOptions {
  /** Every tenant's database is of this backend. */
  readonly backend: Backend;
  /** Opens the database of one tenant (a pool on `database: name`, a SQLite file per tenant, …). */
  open(database: string): Promise<Database>;
  /** Used when a call carries no `ctx.database`; absent, such a call is refused. */
  readonly defaultDatabase?: string;
  /** Pools open at once (default 16, at most 1,024); past it the least recently used idle one is closed. */
  readonly maxOpen?: number;
  /** Which names may be opened (default: any identifier matching `[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}`). */
  readonly allow?: (database: string) => boolean;
  /** prom-client registry for `molo_tenant_pools_open`, `molo_tenant_pool_opens_total`, `molo_tenant_pool_evictions_total`. */
  readonly metrics?: Registry;
}

const OPTION_KEYS: readonly (keyof TenantDatabasesOptions)[] = ['backend', 'open', 'defaultDatabase', 'maxOpen', 'allow', 'metrics'];

interface TenantPool {
  readonly name: string;
  readonly db: Promise<Database>;
  inFlight: number;
  resolved?: Database;
}

interface TenantMetrics {
  readonly open: Gauge;
  readonly opens: Counter<'database'>;
  readonly evictions: Counter;
}

/** A `Database` that routes each call to the pool of its `ctx.database` (see the file comment). */
export class TenantDatabases implements Database {
  readonly backend: Backend;
  readonly #options: TenantDatabasesOptions;
  readonly #maxOpen: number;
  /** Insertion order is recency: a routed call moves its pool to the end. */
  readonly #pools = new Map<string, TenantPool>();
  readonly #metrics: TenantMetrics | undefined;
  #closed = false;

  constructor(options: TenantDatabasesOptions) {
    const unknown = unknownOptionKey(options, OPTION_KEYS);
    if (unknown !== undefined) throw new InvalidDataConfig(`tenants.${unknown.key}`, unknown.detail);
    if (typeof options.open !== 'function') throw new InvalidDataConfig('tenants.open', 'must be a function (database) => Promise<Database>');
    const maxOpen = options.maxOpen ?? TENANT_DEFAULTS.maxOpen;
    if (!Number.isInteger(maxOpen) || maxOpen < 1 || maxOpen > TENANT_CAPS.maxOpen) {
      throw new InvalidDataConfig('tenants.maxOpen', `must be an integer from 1 to ${TENANT_CAPS.maxOpen}, got ${maxOpen}`);
    }
    this.backend = options.backend;
    this.#options = options;
    this.#maxOpen = maxOpen;
    const registers = options.metrics === undefined ? undefined : [options.metrics];
    this.#metrics = registers && {
      open: new prom.Gauge({ name: 'molo_tenant_pools_open', help: 'Tenant pools open.', registers }),
      opens: new prom.Counter({ name: 'molo_tenant_pool_opens_total', help: 'Tenant pools opened, by database.', labelNames: ['database'], registers }),
      evictions: new prom.Counter({ name: 'molo_tenant_pool_evictions_total', help: 'Idle tenant pools closed to make room under maxOpen.', registers }),
    };
  }

  /** The databases with a pool open now, least recently used first. */
  get open(): readonly string[] {
    return [...this.#pools.keys()];
  }

  /** Runs `fn` on the pool of `ctx.database`, counting the call in flight so the pool is not closed under it. */
  async #on<T>(ctx: DataContext | undefined, fn: (db: Database) => Promise<T>): Promise<T> {
    const pool = this.#route(ctx);
    pool.inFlight++;
    try {
      return await fn(await pool.db);
    } finally {
      pool.inFlight--;
    }
  }

  #route(ctx: DataContext | undefined): TenantPool {
    if (this.#closed) throw new InvalidDataConfig('tenants', 'the tenant router is closed');
    const name = ctx?.database ?? this.#options.defaultDatabase;
    if (name === undefined) throw new InvalidDataConfig('ctx.database', 'a tenant router needs ctx.database on every call (or a defaultDatabase)');
    const existing = this.#pools.get(name);
    if (existing !== undefined) {
      this.#pools.delete(name);
      this.#pools.set(name, existing);
      return existing;
    }
    if (typeof name !== 'string' || !TENANT_NAME.test(name) || (this.#options.allow !== undefined && !this.#options.allow(name))) {
      throw new InvalidDataConfig('ctx.database', `'${String(name).slice(0, 100)}' is not a tenant this router may open`);
    }
    if (this.#pools.size >= this.#maxOpen) this.#evictOne(name);
    const db = this.#options.open(name);
    const pool: TenantPool = { name, db, inFlight: 0 };
    this.#pools.set(name, pool);
    // A pool that failed to open is forgotten, so the next call tries again.
    db.then((opened) => (pool.resolved = opened)).catch(() => {
      if (this.#pools.get(name) === pool) this.#pools.delete(name);
      this.#metrics?.open.set(this.#pools.size);
    });
    this.#metrics?.opens.inc({ database: name });
    this.#metrics?.open.set(this.#pools.size);
    return pool;
  }

  #evictOne(requested: string): void {
    for (const pool of this.#pools.values()) {
      if (pool.inFlight > 0) continue;
      this.#pools.delete(pool.name);
      this.#metrics?.evictions.inc();
      void pool.db.then((db) => db.close()).catch(() => undefined);
      return;
    }
    throw new TenantPoolsExhausted(this.#maxOpen, requested);
  }

  query<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: QueryOptions): Promise<Result<R>> {
    return this.#on(ctx, (db) => db.query<R>(sql, params, ctx, options));
  }

  prepare<R extends Row = Row>(sql: string, ctx?: DataContext): Promise<PreparedStatement<R>> {
    return this.#on(ctx, (db) => db.prepare<R>(sql, ctx));
  }

  async *stream<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: StreamOptions): AsyncGenerator<R, void, undefined> {
    const pool = this.#route(ctx);
    pool.inFlight++;
    try {
      yield* (await pool.db).stream<R>(sql, params, ctx, options);
    } finally {
      pool.inFlight--;
    }
  }

  ping(ctx?: DataContext): Promise<void> {
    return this.#on(ctx, (db) => db.ping(ctx));
  }

  transaction<T>(fn: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return this.#on(options?.ctx, (db) => db.transaction(fn, options));
  }

  session<T>(fn: (session: Queryable) => Promise<T>, ctx?: DataContext): Promise<T> {
    return this.#on(ctx, (db) => db.session(fn, ctx));
  }

  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryManyOptions & { readonly results?: true }): Promise<Result<R>[]>;
  queryMany(sql: string, rows: readonly (readonly Value[])[], ctx: DataContext | undefined, options: QueryManyOptions & { readonly results: false }): Promise<ManyTotals>;
  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryManyOptions): Promise<Result<R>[] | ManyTotals> {
    return this.#on(ctx, (db) => db.queryMany(sql, rows, ctx ?? BACKGROUND, options as QueryManyOptions & { readonly results: false }));
  }

  /** Healthy when every open pool is (none open: healthy, nothing was asked yet); the counts are summed. */
  health(): DatabaseHealth {
    let connections = 0;
    let idle = 0;
    let waiting = 0;
    let reason: string | undefined;
    for (const pool of this.#pools.values()) {
      const one = pool.resolved?.health();
      if (one === undefined) continue;
      connections += one.connections;
      idle += one.idle;
      waiting += one.waiting;
      if (!one.healthy) reason ??= `${pool.name}: ${one.reason ?? 'unhealthy'}`;
    }
    return { healthy: reason === undefined, ...(reason === undefined ? {} : { reason }), connections, idle, waiting };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    this.#metrics?.open.set(0);
    await Promise.all(pools.map((pool) => pool.db.then((db) => db.close(), () => undefined)));
  }
}

/** A router over per-tenant databases (see TenantDatabases). */
export function openTenantDatabases(options: TenantDatabasesOptions): TenantDatabases {
  return new TenantDatabases(options);
}
