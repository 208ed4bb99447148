/**
 * A KV store in a SQL `Database` (Postgres or SQLite): one table, created on open, keys and values as
 * bytes. Expired rows are invisible at once (every read compares `expires_at` with the clock) and
 * deleted by a background sweep in bounded batches.
 *
 * Key cap (04 Specs: 1,048,576 keys per store, LRU eviction beyond; `maxKeys` lower): each row has a
 * last-access time (`accessed_at`, ms on the store's clock), set by every write in its own statement
 * and moved by reads in batches (a read records its key in memory; the batch is written when it
 * holds TOUCH_BATCH keys, at each sweep tick and before any eviction). The store counts its own
 * inserts against the table's row count (read with `count(*)` when unknown and whenever the estimate
 * passes the cap); past the cap it removes expired rows first, then the least recently accessed ones
 * down to a low-water mark (`maxKeys - floor(maxKeys / 64)`, so that a full store of a million keys
 * counts its rows once per ~16,000 inserts rather than on every one), counting those in `evictions`.
 */
import type { Clock } from '../../actors/index.js';
import type { ChildSpec } from '../../behaviours/index.js';
import type { Logger } from '../../telemetry/index.js';
import type { DataContext } from '../context.js';
import type { Database } from '../database.js';
import { InvalidDataConfig, PoolClosed } from '../errors.js';
import type { Oplog } from '../replication/oplog.js';
import type { ReplicatedOption, ReplicatedTarget } from '../replication/targets.js';
import { refuseUnknownKeys } from '../option-keys.js';
import { outsideTransaction } from '../transaction-scope.js';
import { checkExpected, checkKey, checkScan, checkValue, compareKeys, expiryOf, prefixEnd } from './caps.js';
import { integerOption, resolveCommon, type KvCommonOptions } from './options.js';
import { postgresKv } from './postgres.js';
import { checkKvReplication, KvOplogWriter, kvTarget } from './replicated.js';
import { checkTable, type KvBackendFactory, type KvSqlBackend } from './sql-backend.js';
import { sqliteKv } from './sqlite.js';
import { KV_LIMITS, type KvCasResult, type KvEntry, type KvScanOptions, type KvScanPage, type KvSetOptions, type KvStore } from './store.js';
import { Sweeper } from './sweeper.js';

export interface SqlKvOptions extends KvCommonOptions {
  /** The table (default `molo_kv`); several stores may share a database under different tables. */
  readonly table?: string;
  /** Where sweep failures are reported (a sweep failing only delays the removal of expired rows). */
  readonly logger?: Logger;
  /** Context of the statements that create the table. */
  readonly ctx?: DataContext;
  /** Close the database on `close()` (set when the store opened it: `openSqliteKv`). */
  readonly ownsDatabase?: boolean;
  /** Keys held before the least recently used are evicted (default and cap 1,048,576). */
  readonly maxKeys?: number;
  /**
   * Replicate this store's writes by oplog (docs/replication.md): `lww`, or `hook` with a resolver.
   * Needs `oplog`; remote entries are applied through `replicationTarget()` given to the sink.
   */
  readonly replicated?: ReplicatedOption;
  /** This instance's oplog, for a `replicated` store. */
  readonly oplog?: Oplog;
}

/** Every key `openKv` options may hold: any other is refused by name. */
const SQL_KV_KEYS: readonly string[] = ['table', 'clock', 'sweepIntervalMs', 'sweepBatch', 'logger', 'ctx', 'ownsDatabase', 'maxKeys', 'replicated', 'oplog'];

/** Reads recorded in memory before their last-access times are written in one batch. */
const TOUCH_BATCH = 1_024;

export interface SqlKvStats {
  /** Live keys removed to stay within `maxKeys` (expired rows removed on the way are not counted). */
  readonly evictions: number;
}

export class SqlKvStore implements KvStore {
  readonly backend: 'postgres' | 'sqlite';
  readonly table: string;
  readonly #sql: KvSqlBackend;
  readonly #db: Database;
  readonly #factory: KvBackendFactory;
  /** Set for a replicated store: writes run with their oplog entry. */
  readonly #replicated: KvOplogWriter | undefined;
  readonly #clock: Clock;
  readonly #batch: number;
  readonly #sweeper: Sweeper;
  /** The database, when the store opened it and so closes it. */
  readonly #owned: Database | undefined;
  readonly #logger: Logger | undefined;
  /** Keys held before the least recently used are evicted. */
  readonly maxKeys: number;
  /** What eviction brings the table down to. */
  readonly #lowWater: number;
  /** Rows in the table as this store knows them: the last count plus its inserts since (overwrites counted too, so an upper bound). */
  #estimate = 0;
  /** Whether `#estimate` started from a count. */
  #counted = false;
  #enforcing: Promise<void> | undefined;
  /** Reads not yet written: key -> last access. */
  #touches = new Map<string, number>();
  #flushing: Promise<void> | undefined;
  #evictions = 0;

  constructor(db: Database, options: SqlKvOptions = {}) {
    refuseUnknownKeys('kv', options, SQL_KV_KEYS);
    const common = resolveCommon(options);
    this.maxKeys = integerOption('kv.maxKeys', options.maxKeys, KV_LIMITS.maxKeys, 1, KV_LIMITS.maxKeys);
    this.#lowWater = this.maxKeys - Math.floor(this.maxKeys / 64);
    this.#logger = options.logger;
    this.#owned = options.ownsDatabase === true ? db : undefined;
    this.backend = db.backend;
    this.table = checkTable(options.table ?? 'molo_kv');
    this.#db = db;
    this.#factory = db.backend === 'postgres' ? postgresKv : sqliteKv;
    this.#sql = this.#factory(db, this.table);
    if (options.replicated !== undefined || options.oplog !== undefined) {
      this.#replicated = new KvOplogWriter(db, this.#factory, this.table, checkKvReplication({ oplog: options.oplog, policy: options.replicated }));
    }
    this.#clock = common.clock;
    this.#batch = common.sweepBatch;
    const logger = options.logger;
    this.#sweeper = new Sweeper({
      clock: common.clock,
      intervalMs: common.sweepIntervalMs,
      batch: common.sweepBatch,
      sweep: async () => {
        await this.#flushTouches();
        return this.sweepExpired();
      },
      onError: (error) => {
        // The database was closed under the store: nothing left to sweep, stop rather than fail every tick.
        if (error instanceof PoolClosed) return void this.#sweeper.close();
        logger?.warn({ event: 'kv.sweep_failed', table: this.table, err: error }, 'kv.sweep_failed');
      },
    });
  }

  /** Creates the table if missing and starts the sweep. */
  async open(ctx?: DataContext): Promise<this> {
    await this.#sql.init(ctx);
    this.#sweeper.start();
    return this;
  }

  /**
   * A child spec for the application's tree: its actor drives this store's sweep of expired keys
   * (ticks through its mailbox), so the sweep is visible in `/tree` and restarted by the tree's
   * rules; until the child starts, and between its death and its restart, the sweep waits.
   */
  sweeperChild(id = 'kv-sweeper'): ChildSpec {
    return this.#sweeper.childSpec(id);
  }

  /** Counters: live keys evicted to stay within `maxKeys`. */
  stats(): SqlKvStats {
    return { evictions: this.#evictions };
  }

  async get(key: string, ctx?: DataContext): Promise<KvEntry | undefined> {
    checkKey(key);
    const now = this.#now();
    const entry = await this.#sql.get(Buffer.from(key), now, ctx);
    if (entry !== undefined) this.#touch(key, now);
    return entry;
  }

  async set(key: string, value: Uint8Array, options?: KvSetOptions, ctx?: DataContext): Promise<number> {
    checkKey(key);
    checkValue(value);
    const now = this.#now();
    const expiresAt = expiryOf(options, now);
    const bytes = Buffer.from(key);
    const version =
      this.#replicated === undefined
        ? await this.#sql.set(bytes, value, expiresAt, now, ctx)
        : await this.#replicated.write(key, (sql) => sql.set(bytes, value, expiresAt, now, ctx), () => ({ op: 'upsert', data: { value: Buffer.from(value), expiresAt } }), ctx);
    await this.#inserted(ctx);
    return version;
  }

  async delete(key: string, ctx?: DataContext): Promise<boolean> {
    checkKey(key);
    const bytes = Buffer.from(key);
    const now = this.#now();
    if (this.#replicated === undefined) return this.#sql.delete(bytes, now, ctx);
    // Deleting what is not live (absent, or expired at the same deadline everywhere) changes nothing: no entry.
    return this.#replicated.write(key, (sql) => sql.delete(bytes, now, ctx), (live) => (live ? { op: 'delete', data: null } : undefined), ctx);
  }

  async exists(key: string, ctx?: DataContext): Promise<boolean> {
    checkKey(key);
    return this.#sql.exists(Buffer.from(key), this.#now(), ctx);
  }

  async scan(prefix: string, options?: KvScanOptions, ctx?: DataContext): Promise<KvScanPage> {
    const { cursor, limit } = checkScan(prefix, options);
    const afterCursor = cursor !== undefined && compareKeys(cursor, prefix) >= 0;
    const start = Buffer.from(afterCursor ? cursor : prefix);
    // One more than the page: whether there is a next page, without an empty last page.
    const found = await this.#sql.scan(start, afterCursor, prefixEnd(Buffer.from(prefix)), limit + 1, this.#now(), ctx);
    const keys = found.slice(0, limit).map((key) => key.toString('utf8'));
    return found.length > limit ? { keys, next: keys[limit - 1]! } : { keys };
  }

  async setIfVersion(key: string, value: Uint8Array, expectedVersion: number | null, options?: KvSetOptions, ctx?: DataContext): Promise<KvCasResult> {
    checkKey(key);
    checkValue(value);
    const expected = checkExpected(expectedVersion, true);
    const now = this.#now();
    const expiresAt = expiryOf(options, now);
    const bytes = Buffer.from(key);
    const attempt = (sql: KvSqlBackend): Promise<number | null> =>
      expected === null ? sql.insertIfAbsent(bytes, value, expiresAt, now, ctx) : sql.updateIfVersion(bytes, value, expiresAt, expected, now, ctx);
    const version =
      this.#replicated === undefined
        ? await attempt(this.#sql)
        : await this.#replicated.write(key, attempt, (written) => (written === null ? undefined : { op: 'upsert', data: { value: Buffer.from(value), expiresAt } }), ctx);
    if (version !== null) {
      if (expected === null) await this.#inserted(ctx);
      return { ok: true, version };
    }
    return { ok: false, version: await this.#sql.version(bytes, now, ctx) };
  }

  async deleteIfVersion(key: string, expectedVersion: number, ctx?: DataContext): Promise<KvCasResult> {
    checkKey(key);
    const expected = checkExpected(expectedVersion, false)!;
    const bytes = Buffer.from(key);
    const now = this.#now();
    const deleted =
      this.#replicated === undefined
        ? await this.#sql.deleteIfVersion(bytes, expected, now, ctx)
        : await this.#replicated.write(key, (sql) => sql.deleteIfVersion(bytes, expected, now, ctx), (done) => (done ? { op: 'delete', data: null } : undefined), ctx);
    if (deleted) return { ok: true, version: expected };
    return { ok: false, version: await this.#sql.version(bytes, now, ctx) };
  }

  /** For a replicated store: what the sink writes remote entries through (give it in `OplogApplier`'s `targets`). */
  replicationTarget(): ReplicatedTarget {
    const writer = this.#replicated;
    if (writer === undefined) throw new InvalidDataConfig('kv.replicated', `KV store ${this.table} does not declare replicated`);
    return kvTarget({ db: this.#db, factory: this.#factory, table: this.table, policy: writer.replication.policy, now: () => this.#now() });
  }

  sweepExpired(ctx?: DataContext): Promise<number> {
    return this.#sql.sweep(this.#now(), this.#batch, ctx);
  }

  async close(): Promise<void> {
    await this.#sweeper.close();
    await this.#enforcing;
    await this.#flushTouches();
    await this.#owned?.close();
  }

  /** Records a read; the batch is written once it is full (outside any transaction callback of the caller's). */
  #touch(key: string, now: number): void {
    this.#touches.set(key, now);
    if (this.#touches.size >= TOUCH_BATCH && this.#flushing === undefined) void outsideTransaction(() => this.#flushTouches());
  }

  /** Writes the recorded reads' last-access times; a failure is logged and loses only those (approximate LRU). */
  #flushTouches(ctx?: DataContext): Promise<void> {
    if (this.#flushing !== undefined) return this.#flushing;
    if (this.#touches.size === 0) return Promise.resolve();
    const accesses: (readonly [Buffer, number])[] = [];
    for (const [key, at] of this.#touches) accesses.push([Buffer.from(key), at]);
    this.#touches = new Map();
    this.#flushing = this.#sql
      .touch(accesses, ctx)
      .catch((error: unknown) => {
        if (!(error instanceof PoolClosed)) this.#logger?.warn({ event: 'kv.touch_failed', table: this.table, err: error }, 'kv.touch_failed');
      })
      .finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  /** After a write that may have added a key: past the cap (or with no count yet), enforce it. */
  #inserted(ctx: DataContext | undefined): Promise<void> | undefined {
    this.#estimate++;
    if (this.#counted && this.#estimate <= this.maxKeys) return undefined;
    this.#enforcing ??= this.#enforce(ctx).finally(() => (this.#enforcing = undefined));
    return this.#enforcing;
  }

  /**
   * Counts the rows; past `maxKeys`, removes expired rows, then the least recently accessed, down to
   * the low-water mark. A failure is logged and retried at the next insert: the write that
   * triggered it has landed and stays acknowledged.
   */
  async #enforce(ctx: DataContext | undefined): Promise<void> {
    const before = this.#estimate;
    try {
      await this.#flushTouches(ctx);
      let rows = await this.#sql.count(ctx);
      if (rows > this.maxKeys) {
        const swept = await this.#sql.sweep(this.#now(), rows - this.#lowWater, ctx);
        rows -= swept;
        if (rows > this.#lowWater) {
          const evicted = await this.#sql.evict(rows - this.#lowWater, ctx);
          this.#evictions += evicted;
          rows -= evicted;
        }
      }
      // Inserts that landed while this ran are not in the count: keep them in the estimate.
      this.#estimate = rows + (this.#estimate - before);
      this.#counted = true;
    } catch (error) {
      this.#counted = false;
      this.#logger?.warn({ event: 'kv.evict_failed', table: this.table, err: error }, 'kv.evict_failed');
    }
  }

  /** Whole milliseconds: the column is an integer, and every backend must compare the same numbers. */
  #now(): number {
    return Math.floor(this.#clock.wallNow());
  }
}

/** A KV store in `db` (its table created if missing, its sweep started). `close()` stops the sweep; the database stays the caller's. */
export async function openKv(db: Database, options?: SqlKvOptions): Promise<SqlKvStore> {
  // async: a bad option rejects the promise rather than throwing before it exists.
  return new SqlKvStore(db, options).open(options?.ctx);
}
