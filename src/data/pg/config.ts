/**
 * A Postgres connection's configuration: defaults, caps, and the one place that checks them. Every
 * cap is static and enforced with a typed error naming the option.
 */
import type { ConnectionOptions } from 'node:tls';
import type { Registry } from 'prom-client';
import { InvalidDataConfig, type RedactedConnection } from '../errors.js';
import { PgTypes } from './types/index.js';

export const DEFAULT_PG_HOST = '127.0.0.1';
export const DEFAULT_PG_PORT = 5432;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const MAX_CONNECT_TIMEOUT_MS = 120_000;
/** Prepared statements kept per connection (LRU); a SQL text is prepared on its second use. */
export const DEFAULT_STATEMENT_CACHE_SIZE = 100;
export const MAX_STATEMENT_CACHE_SIZE = 1_000;
/** Statements written to the socket and not yet answered (the pipeline's depth). */
export const DEFAULT_MAX_IN_FLIGHT = 256;
export const MAX_IN_FLIGHT_CAP = 4_096;
/** Statements accepted but held back (pipeline full, or a cursor/COPY owns the socket); beyond: QueueFull. */
export const DEFAULT_MAX_QUEUED = 65_536;
export const MAX_QUEUED_CAP = 1_048_576;
/** Startup parameters (`params`) at most, and their total size. */
export const MAX_STARTUP_PARAMS = 64;
const MAX_STARTUP_BYTES = 8_192;

export type PasswordSource = string | (() => string | Promise<string>);

export interface PgConfig {
  /** Default 127.0.0.1; a path starting with '/' is a Unix socket directory (socket `.s.PGSQL.<port>`). */
  readonly host?: string;
  readonly port?: number;
  readonly user: string;
  /** Default: the user name. */
  readonly database?: string;
  /** A secret: never logged, never in an error. A function is called when the server asks for it. */
  readonly password?: PasswordSource;
  /** SSLRequest then a TLS upgrade; refused (ConnectFailed) if the server answers 'N'. */
  readonly ssl?: boolean | ConnectionOptions;
  /** MD5 password auth is refused (AuthMethodRefused) unless set. */
  readonly allowMd5?: boolean;
  /** Cleartext password auth is refused (AuthMethodRefused) unless set. */
  readonly allowCleartext?: boolean;
  /**
   * Refuse (AuthMethodRefused) a server that lets us in without asking for the password, or, with
   * SCRAM, without proving it knows it. Default: on when a password is configured (libpq's
   * `require_auth`); set false for a server that may trust some hosts.
   */
  readonly requireAuth?: boolean;
  /** Whole connect, TCP to ReadyForQuery: default 10 s, at most 120 s. */
  readonly connectTimeoutMs?: number;
  /** `application_name`, shown in pg_stat_activity; default 'molo'. */
  readonly applicationName?: string;
  /** Further startup parameters (e.g. `search_path`, `TimeZone`). */
  readonly params?: Readonly<Record<string, string>>;
  /** Default 100, at most 1,000; 0 disables named statements. */
  readonly statementCacheSize?: number;
  /** Default 256, at most 4,096. */
  readonly maxInFlight?: number;
  /** Default 65,536, at most 1,048,576; beyond it `query` fails with QueueFull naming `pg.maxQueued`. */
  readonly maxQueued?: number;
  /** Codec registry (custom types are resolved against pg_type at connect). Default: a shared one. */
  readonly types?: PgTypes;
  /** prom-client registry for the per-query latency histogram and error counter; absent: no metrics. */
  readonly metrics?: Registry;
}

/** The checked configuration, without the password (which is never kept where it could be logged). */
export interface ResolvedPgConfig {
  readonly host: string;
  readonly port: number;
  /** Unix socket file, or undefined for TCP. */
  readonly socketPath: string | undefined;
  readonly user: string;
  readonly database: string;
  readonly ssl: false | ConnectionOptions;
  readonly allowMd5: boolean;
  readonly allowCleartext: boolean;
  readonly requireAuth: boolean;
  readonly connectTimeoutMs: number;
  readonly startup: Readonly<Record<string, string>>;
  readonly statementCacheSize: number;
  readonly maxInFlight: number;
  readonly maxQueued: number;
  readonly types: PgTypes;
  readonly metrics: Registry | undefined;
  /** Which server, for errors and logs: never the password. */
  readonly redacted: RedactedConnection;
}

let sharedTypes: PgTypes | undefined;
/** The codec registry of connections configured without one. */
export function defaultPgTypes(): PgTypes {
  return (sharedTypes ??= new PgTypes());
}

/** Startup parameters the connection sets itself, or that would change the protocol. */
const RESERVED_PARAMS = new Set(['user', 'database', 'replication', 'client_encoding', 'datestyle', 'options']);

/** Checks `config` against every default and cap; the password is checked here but not copied. */
export function resolvePgConfig(config: PgConfig): ResolvedPgConfig {
  if (config === null || typeof config !== 'object') throw new InvalidDataConfig('pg', 'a configuration object is required');
  const host = config.host ?? DEFAULT_PG_HOST;
  if (typeof host !== 'string' || host.length === 0 || host.length > 255) throw new InvalidDataConfig('pg.host', 'must be a host name, address or socket directory');
  const port = integer('pg.port', config.port ?? DEFAULT_PG_PORT, 1, 65_535);
  const user = config.user;
  if (typeof user !== 'string' || user.length === 0 || user.length > 63 || user.includes('\0')) {
    throw new InvalidDataConfig('pg.user', 'must be a non-empty name of at most 63 characters');
  }
  const database = config.database ?? user;
  if (typeof database !== 'string' || database.length === 0 || database.length > 63 || database.includes('\0')) {
    throw new InvalidDataConfig('pg.database', 'must be a non-empty name of at most 63 characters');
  }
  const password = config.password;
  if (password !== undefined && typeof password !== 'string' && typeof password !== 'function') {
    throw new InvalidDataConfig('pg.password', 'must be a string or a function returning one');
  }
  const ssl = config.ssl === undefined || config.ssl === false ? false : config.ssl === true ? {} : config.ssl;
  if (typeof ssl !== 'boolean' && (ssl === null || typeof ssl !== 'object')) throw new InvalidDataConfig('pg.ssl', 'must be a boolean or tls.ConnectionOptions');
  const startup: Record<string, string> = { application_name: config.applicationName ?? 'molo' };
  const params = config.params ?? {};
  const entries = Object.entries(params);
  if (entries.length > MAX_STARTUP_PARAMS) throw new InvalidDataConfig('pg.params', `at most ${MAX_STARTUP_PARAMS} startup parameters`);
  let bytes = 0;
  for (const [key, value] of [...entries, ['application_name', startup.application_name!] as const]) {
    if (typeof value !== 'string' || key.includes('\0') || value.includes('\0') || key.length === 0) {
      throw new InvalidDataConfig('pg.params', `startup parameter ${JSON.stringify(key)} must be a string without NUL`);
    }
    if (RESERVED_PARAMS.has(key.toLowerCase())) throw new InvalidDataConfig('pg.params', `${key} is set by the connection itself`);
    bytes += Buffer.byteLength(key) + Buffer.byteLength(value) + 2;
    startup[key] = value;
  }
  if (bytes > MAX_STARTUP_BYTES) throw new InvalidDataConfig('pg.params', `startup parameters exceed ${MAX_STARTUP_BYTES} bytes`);
  const socketPath = host.startsWith('/') ? `${host.replace(/\/+$/, '')}/.s.PGSQL.${port}` : undefined;
  return {
    host,
    port,
    socketPath,
    user,
    database,
    ssl,
    allowMd5: config.allowMd5 === true,
    allowCleartext: config.allowCleartext === true,
    requireAuth: flag('pg.requireAuth', config.requireAuth, password !== undefined),
    connectTimeoutMs: integer('pg.connectTimeoutMs', config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, 1, MAX_CONNECT_TIMEOUT_MS),
    startup,
    statementCacheSize: integer('pg.statementCacheSize', config.statementCacheSize ?? DEFAULT_STATEMENT_CACHE_SIZE, 0, MAX_STATEMENT_CACHE_SIZE),
    maxInFlight: integer('pg.maxInFlight', config.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT, 1, MAX_IN_FLIGHT_CAP),
    maxQueued: integer('pg.maxQueued', config.maxQueued ?? DEFAULT_MAX_QUEUED, 0, MAX_QUEUED_CAP),
    types: config.types ?? defaultPgTypes(),
    metrics: config.metrics,
    redacted: Object.freeze({ backend: 'postgres', host, port, database, user }),
  };
}

function flag(option: string, value: boolean | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new InvalidDataConfig(option, `must be true or false, got ${String(value)}`);
  return value;
}

function integer(option: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new InvalidDataConfig(option, `must be an integer in ${min}..${max}, got ${String(value)}`);
  return value;
}
