/**
 * What a SQL KV store needs of its backend: statements already checked and encoded (keys as their
 * UTF-8 bytes, times as ms since the epoch on the store's clock, never the server's `now()`).
 */
import type { DataContext } from '../context.js';
import type { Database } from '../database.js';
import { InvalidDataConfig } from '../errors.js';
import type { KvEntry } from './store.js';

export interface KvSqlBackend {
  /** Creates the tables (and sequence or counter row) if missing. */
  init(ctx?: DataContext): Promise<void>;
  get(key: Buffer, now: number, ctx?: DataContext): Promise<KvEntry | undefined>;
  exists(key: Buffer, now: number, ctx?: DataContext): Promise<boolean>;
  /** Writes unconditionally (last access: `now`); resolves with the new version. */
  set(key: Buffer, value: Uint8Array, expiresAt: number | null, now: number, ctx?: DataContext): Promise<number>;
  /** Writes only if no live row has the key; resolves with the new version, or null. */
  insertIfAbsent(key: Buffer, value: Uint8Array, expiresAt: number | null, now: number, ctx?: DataContext): Promise<number | null>;
  /** Writes only if the live row's version is `expected`; resolves with the new version, or null. */
  updateIfVersion(key: Buffer, value: Uint8Array, expiresAt: number | null, expected: number, now: number, ctx?: DataContext): Promise<number | null>;
  /** The live row's version, or null. */
  version(key: Buffer, now: number, ctx?: DataContext): Promise<number | null>;
  /** Deletes the row; resolves with whether it was live. */
  delete(key: Buffer, now: number, ctx?: DataContext): Promise<boolean>;
  deleteIfVersion(key: Buffer, expected: number, now: number, ctx?: DataContext): Promise<boolean>;
  /** Live keys in [start, end) (start excluded when `exclusive`), in byte order, at most `limit`. */
  scan(start: Buffer, exclusive: boolean, end: Buffer, limit: number, now: number, ctx?: DataContext): Promise<Buffer[]>;
  /** Deletes up to `batch` rows expired at `now`; resolves with how many. */
  sweep(now: number, batch: number, ctx?: DataContext): Promise<number>;
  /** Rows in the table, expired ones not yet swept included. */
  count(ctx?: DataContext): Promise<number>;
  /** Records reads: each key's last access moves forward to its time (never back). */
  touch(accesses: readonly (readonly [Buffer, number])[], ctx?: DataContext): Promise<void>;
  /** Deletes up to `n` rows, least recently accessed first; resolves with how many. */
  evict(n: number, ctx?: DataContext): Promise<number>;
}

/** Table names are SQL identifiers spliced into constant statements: only a safe shape is accepted. */
export function checkTable(table: unknown): string {
  if (typeof table !== 'string' || !/^[a-z_][a-z0-9_]{0,39}$/.test(table)) {
    throw new InvalidDataConfig('kv.table', 'must be 1-40 lowercase letters, digits or _, not starting with a digit');
  }
  return table;
}

/** A version or count as a number: Postgres int8 arrives as bigint (versions stay far below 2^53). */
export function toNumber(value: unknown): number {
  return typeof value === 'bigint' ? Number(value) : (value as number);
}

/** A BLOB/bytea column as a Buffer (SQLite's may cross the worker hop as a bare Uint8Array). */
export function toBuffer(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(`expected bytes, got ${typeof value}`);
}

/** A value as a Buffer for binding (both drivers bind Buffers as BLOB/bytea); wraps, never copies. */
export function asBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

export type KvBackendFactory = (db: Database, table: string) => KvSqlBackend;

/** The upkeep statements of a backend, in its own dialect: expired rows, the row count, read times, eviction. */
export interface KvUpkeepStatements {
  /** `$1` now, `$2` batch. */
  readonly sweep: string;
  readonly count: string;
  /** `$1` key, `$2` access time (moved forward only). */
  readonly touch: string;
  /** `$1` rows to delete, least recently accessed first. */
  readonly evict: string;
}

/** Statements both backends run the same way, each in its own dialect. */
export interface KvKeyedStatements {
  /** `$1` key, `$2` expected version, `$3` now. */
  readonly deleteIfVersion: string;
  /** `$1` start, `$2` end, `$3` now, `$4` limit; start excluded / included. */
  readonly scanAfter: string;
  readonly scanFrom: string;
}

/** `deleteIfVersion` and `scan` of a backend: the same calls on both, over its own SQL. */
export function keyedMethods(db: Database, sql: KvKeyedStatements): Pick<KvSqlBackend, 'deleteIfVersion' | 'scan'> {
  return {
    async deleteIfVersion(key, expected, now, ctx) {
      return (await db.query(sql.deleteIfVersion, [key, expected, now], ctx)).rows.length > 0;
    },
    async scan(start, exclusive, end, limit, now, ctx) {
      const { rows } = await db.query(exclusive ? sql.scanAfter : sql.scanFrom, [start, end, now, limit], ctx);
      return rows.map((row) => toBuffer(row.key));
    },
  };
}

/** `sweep`, `count`, `touch` and `evict` of a backend: the same calls on both, over its own SQL. */
export function upkeepMethods(db: Database, sql: KvUpkeepStatements): Pick<KvSqlBackend, 'sweep' | 'count' | 'touch' | 'evict'> {
  return {
    async sweep(now, batch, ctx) {
      return (await db.query(sql.sweep, [now, batch], ctx)).affected;
    },
    async count(ctx) {
      return toNumber((await db.query(sql.count, undefined, ctx)).rows[0]!.n);
    },
    async touch(accesses, ctx) {
      await db.queryMany(sql.touch, accesses, ctx, { results: false });
    },
    async evict(n, ctx) {
      return (await db.query(sql.evict, [n], ctx)).affected;
    },
  };
}
