/**
 * A KV store in a SQL `Database` (Postgres or SQLite): one table, created on open, keys and values as
 * bytes. It never evicts (a lease must not vanish): keys leave by delete or expiry only. Expired rows
 * are invisible at once (every read compares `expires_at` with the clock) and deleted by a background
 * sweep in bounded batches.
 */
import type { Clock } from '../../actors/index.js';
import type { Logger } from '../../telemetry/index.js';
import type { DataContext } from '../context.js';
import type { Database } from '../database.js';
import { PoolClosed } from '../errors.js';
import { checkExpected, checkKey, checkScan, checkValue, compareKeys, expiryOf, prefixEnd } from './caps.js';
import { resolveCommon, type KvCommonOptions } from './options.js';
import { postgresKv } from './postgres.js';
import { checkTable, type KvSqlBackend } from './sql-backend.js';
import { sqliteKv } from './sqlite.js';
import type { KvCasResult, KvEntry, KvScanOptions, KvScanPage, KvSetOptions, KvStore } from './store.js';
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
}

export class SqlKvStore implements KvStore {
  readonly backend: 'postgres' | 'sqlite';
  readonly table: string;
  readonly #sql: KvSqlBackend;
  readonly #clock: Clock;
  readonly #batch: number;
  readonly #sweeper: Sweeper;
  /** The database, when the store opened it and so closes it. */
  readonly #owned: Database | undefined;

  constructor(db: Database, options: SqlKvOptions = {}) {
    const common = resolveCommon(options);
    this.#owned = options.ownsDatabase === true ? db : undefined;
    this.backend = db.backend;
    this.table = checkTable(options.table ?? 'molo_kv');
    this.#sql = db.backend === 'postgres' ? postgresKv(db, this.table) : sqliteKv(db, this.table);
    this.#clock = common.clock;
    this.#batch = common.sweepBatch;
    const logger = options.logger;
    this.#sweeper = new Sweeper({
      clock: common.clock,
      intervalMs: common.sweepIntervalMs,
      batch: common.sweepBatch,
      sweep: () => this.sweepExpired(),
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

  async get(key: string, ctx?: DataContext): Promise<KvEntry | undefined> {
    checkKey(key);
    return this.#sql.get(Buffer.from(key), this.#now(), ctx);
  }

  async set(key: string, value: Uint8Array, options?: KvSetOptions, ctx?: DataContext): Promise<number> {
    checkKey(key);
    checkValue(value);
    return this.#sql.set(Buffer.from(key), value, expiryOf(options, this.#now()), ctx);
  }

  async delete(key: string, ctx?: DataContext): Promise<boolean> {
    checkKey(key);
    return this.#sql.delete(Buffer.from(key), this.#now(), ctx);
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
    const version =
      expected === null
        ? await this.#sql.insertIfAbsent(bytes, value, expiresAt, now, ctx)
        : await this.#sql.updateIfVersion(bytes, value, expiresAt, expected, now, ctx);
    if (version !== null) return { ok: true, version };
    return { ok: false, version: await this.#sql.version(bytes, now, ctx) };
  }

  async deleteIfVersion(key: string, expectedVersion: number, ctx?: DataContext): Promise<KvCasResult> {
    checkKey(key);
    const expected = checkExpected(expectedVersion, false)!;
    const bytes = Buffer.from(key);
    const now = this.#now();
    if (await this.#sql.deleteIfVersion(bytes, expected, now, ctx)) return { ok: true, version: expected };
    return { ok: false, version: await this.#sql.version(bytes, now, ctx) };
  }

  sweepExpired(ctx?: DataContext): Promise<number> {
    return this.#sql.sweep(this.#now(), this.#batch, ctx);
  }

  async close(): Promise<void> {
    await this.#sweeper.close();
    await this.#owned?.close();
  }

  /** Whole milliseconds: the column is an integer, and every backend must compare the same numbers. */
  #now(): number {
    return Math.floor(this.#clock.wallNow());
  }
}

/** A KV store in `db` (its table created if missing, its sweep started). `close()` stops the sweep; the database stays the caller's. */
export function openKv(db: Database, options?: SqlKvOptions): Promise<SqlKvStore> {
  return new SqlKvStore(db, options).open(options?.ctx);
}
