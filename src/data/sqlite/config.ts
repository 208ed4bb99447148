/**
 * SQLite settings: each has a static default and a range, and a value outside it is an
 * InvalidDataConfig naming the option.
 */
import type { Registry } from 'prom-client';
import type { Logger } from '../../telemetry/index.js';
import { InvalidDataConfig } from '../errors.js';
import { refuseUnknownKeys } from '../option-keys.js';

/**
 * When a commit reaches the disk (PRAGMA synchronous on the writer; the file is in WAL mode).
 * `full`: the WAL is fsynced at every commit, before the commit returns, so an acknowledged write
 * survives a power loss. `normal`: the WAL is fsynced only at checkpoints; an acknowledged write
 * survives the process dying (SIGKILL, a crash: it is in the OS page cache) but the last commits
 * before a power loss or kernel crash may be rolled back (the database stays consistent).
 */
export type SqliteSynchronous = 'full' | 'normal';

export const SQLITE_SYNCHRONOUS: readonly SqliteSynchronous[] = ['full', 'normal'];

export interface SqliteConfig {
  /** The database file; created if missing. `:memory:` is refused: one in-memory database cannot be shared by threads. */
  readonly file: string;
  /**
   * Create the file's missing directories (default false: a missing directory is refused with
   * SqliteDirectoryMissing naming it, since a wrong path should not become a new empty database).
   */
  readonly createDirectory?: boolean;
  /** Names the handle in logs, metrics and its threads' host names (`<name>.writer`, `<name>.reader.<i>`). Default `sqlite-<n>`. */
  readonly name?: string;
  /** Reader threads (default 2, 0..8); with none, reads go to the writer. */
  readonly readers?: number;
  /** SQLite's busy_timeout on every handle (default 5,000 ms, 0..60,000). */
  readonly busyTimeoutMs?: number;
  /** Retries after SQLITE_BUSY outlasted busy_timeout, with 10 ms doubling pauses (default 2, 0..10). */
  readonly busyRetries?: number;
  /** PRAGMA journal_size_limit: bytes the WAL file is truncated to after a checkpoint (default 64 MiB). */
  readonly journalSizeLimitBytes?: number;
  /** PRAGMA wal_autocheckpoint, in pages (default 1,000). */
  readonly walAutocheckpointPages?: number;
  /** How often the scheduler tries `wal_checkpoint(TRUNCATE)` while no read is open (default 30 s; 0 disables). */
  readonly checkpointIntervalMs?: number;
  /** The longest a read transaction or stream may stay open; then it is rolled back with ReadTooLong (default 30 s). */
  readonly maxReadMs?: number;
  /** Callers waiting for the writer (transactions, and writes behind one); one more fails with PoolExhausted (default 256). */
  readonly maxWaiters?: number;
  /** How long a caller waits for the writer before AcquireTimeout (default 5 s). */
  readonly acquireTimeoutMs?: number;
  /** Requests queued or in flight per thread; one more fails with QueueFull (default 131,072). */
  readonly maxQueuedRequests?: number;
  /** Prepared statements each thread keeps, least recently used dropped first (default 500). */
  readonly statementCacheSize?: number;
  /** Restarts of its threads allowed within 10 s before the handle gives up and reports unhealthy (default 5). */
  readonly maxRestarts?: number;
  /**
   * Durability of a commit (default `normal` for an application's database; the stores that open a
   * file of their own choose theirs: streams, task queue and KV default to `full`). See SqliteSynchronous.
   */
  readonly synchronous?: SqliteSynchronous;
  /**
   * Record the caller's async frames in a failed statement's `callerStack` (default true). Only a
   * failure pays (two microtask hops and a stack), so statements issued while more than 1,024 are
   * pending on their thread (bulk work, where thousands may fail together) skip it; false turns it
   * off altogether.
   */
  readonly captureCallerStacks?: boolean;
  /** Prometheus registry for the data metrics (busy, checkpoints, waiters); none: no metrics. */
  readonly metrics?: Registry;
  /** Default: the system's logger, if it has one. */
  readonly logger?: Logger;
}

export interface ResolvedSqliteConfig {
  readonly file: string;
  readonly createDirectory: boolean;
  readonly name: string;
  readonly captureCallerStacks: boolean;
  readonly synchronous: SqliteSynchronous;
  readonly readers: number;
  readonly busyTimeoutMs: number;
  readonly busyRetries: number;
  readonly journalSizeLimitBytes: number;
  readonly walAutocheckpointPages: number;
  readonly checkpointIntervalMs: number;
  readonly maxReadMs: number;
  readonly maxWaiters: number;
  readonly acquireTimeoutMs: number;
  readonly maxQueuedRequests: number;
  readonly statementCacheSize: number;
  readonly maxRestarts: number;
}

type NumericOption = Exclude<keyof ResolvedSqliteConfig, 'file' | 'createDirectory' | 'name' | 'captureCallerStacks' | 'synchronous'>;

/** The database's own default: an application's file, where a commit per request makes fsync the bottleneck. */
export const SQLITE_DEFAULT_SYNCHRONOUS: SqliteSynchronous = 'normal';

export const SQLITE_DEFAULTS: { readonly [K in NumericOption]: number } = {
  readers: 2,
  busyTimeoutMs: 5_000,
  busyRetries: 2,
  journalSizeLimitBytes: 64 * 1024 * 1024,
  walAutocheckpointPages: 1_000,
  checkpointIntervalMs: 30_000,
  maxReadMs: 30_000,
  maxWaiters: 256,
  acquireTimeoutMs: 5_000,
  maxQueuedRequests: 131_072,
  statementCacheSize: 500,
  maxRestarts: 5,
};

/** [min, max] of each option. */
export const SQLITE_LIMITS: { readonly [K in NumericOption]: readonly [number, number] } = {
  readers: [0, 8],
  busyTimeoutMs: [0, 60_000],
  busyRetries: [0, 10],
  journalSizeLimitBytes: [0, 4 * 1024 * 1024 * 1024],
  walAutocheckpointPages: [0, 1_000_000],
  checkpointIntervalMs: [0, 3_600_000],
  maxReadMs: [10, 300_000],
  maxWaiters: [0, 65_536],
  acquireTimeoutMs: [1, 300_000],
  maxQueuedRequests: [1, 1_048_576],
  statementCacheSize: [1, 10_000],
  maxRestarts: [0, 100],
};

let unnamed = 0;

/** Every key a SqliteConfig may hold: a misspelt one is refused, with the nearest named. */
const SQLITE_KEYS: readonly string[] = ['file', 'createDirectory', 'name', 'synchronous', 'captureCallerStacks', 'metrics', 'logger', ...Object.keys(SQLITE_DEFAULTS)];

export function resolveSqliteConfig(config: SqliteConfig): ResolvedSqliteConfig {
  if (config === null || typeof config !== 'object') throw new InvalidDataConfig('sqlite', 'the config must be an object');
  refuseUnknownKeys('sqlite', config, SQLITE_KEYS);
  const { file } = config;
  if (typeof file !== 'string' || file.length === 0) throw new InvalidDataConfig('sqlite.file', 'must be a file path');
  if (file === ':memory:' || file.startsWith('file:')) {
    throw new InvalidDataConfig('sqlite.file', `${file}: only files are supported (threads cannot share an in-memory database, URIs are not parsed)`);
  }
  const name = config.name ?? `sqlite-${++unnamed}`;
  if (typeof name !== 'string' || !/^[\w.-]{1,64}$/.test(name)) throw new InvalidDataConfig('sqlite.name', 'must be 1-64 letters, digits, _ . or -');
  const captureCallerStacks = config.captureCallerStacks ?? true;
  if (typeof captureCallerStacks !== 'boolean') throw new InvalidDataConfig('sqlite.captureCallerStacks', 'must be a boolean');
  const synchronous = config.synchronous ?? SQLITE_DEFAULT_SYNCHRONOUS;
  if (!SQLITE_SYNCHRONOUS.includes(synchronous)) {
    throw new InvalidDataConfig('sqlite.synchronous', `must be ${SQLITE_SYNCHRONOUS.map((value) => `'${value}'`).join(' or ')}, got ${JSON.stringify(synchronous)}`);
  }
  const createDirectory = config.createDirectory ?? false;
  if (typeof createDirectory !== 'boolean') throw new InvalidDataConfig('sqlite.createDirectory', 'must be a boolean');
  const resolved: Record<string, unknown> = { file, createDirectory, name, captureCallerStacks, synchronous };
  for (const key of Object.keys(SQLITE_DEFAULTS) as NumericOption[]) {
    const value = config[key] ?? SQLITE_DEFAULTS[key];
    const [min, max] = SQLITE_LIMITS[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new InvalidDataConfig(`sqlite.${key}`, `must be an integer in ${min}..${max}, got ${String(value)}`);
    }
    resolved[key] = value;
  }
  const checkpoint = resolved.checkpointIntervalMs as number;
  if (checkpoint !== 0 && checkpoint < 10) throw new InvalidDataConfig('sqlite.checkpointIntervalMs', 'must be 0 (off) or at least 10 ms');
  return resolved as unknown as ResolvedSqliteConfig;
}
