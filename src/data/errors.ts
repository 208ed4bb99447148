/**
 * Error registry of the data layer. Stable codes, never reused; documented in docs/errors.md.
 *
 * `DbError` is the base: it carries what the server said (SQLSTATE or SQLite's extended result
 * code and every field), where the caller stood (`callerStack`), whether retrying can help
 * (`retryable`, decided by code), and which server it was (`connection`, never a password).
 */
import { MoloError } from '../actors/index.js';
import type { Backend } from './values.js';

export const DataErrorCode = {
  QueryFailed: 'DB_QUERY_FAILED',
  StatementTimeout: 'DB_STATEMENT_TIMEOUT',
  ConnectionLost: 'DB_CONNECTION_LOST',
  OutcomeUnknown: 'DB_OUTCOME_UNKNOWN',
  ConnectFailed: 'DB_CONNECT_FAILED',
  AuthFailed: 'DB_AUTH_FAILED',
  AuthMethodRefused: 'DB_AUTH_METHOD_REFUSED',
  ProtocolError: 'DB_PROTOCOL_ERROR',
  PoolExhausted: 'DB_POOL_EXHAUSTED',
  AcquireTimeout: 'DB_ACQUIRE_TIMEOUT',
  PoolClosed: 'DB_POOL_CLOSED',
  TooManyRows: 'DB_TOO_MANY_ROWS',
  TooManyParameters: 'DB_TOO_MANY_PARAMETERS',
  RowTooLarge: 'DB_ROW_TOO_LARGE',
  EncodeFailed: 'DB_ENCODE_FAILED',
  QueueFull: 'DB_QUEUE_FULL',
  SqliteBusy: 'DB_SQLITE_BUSY',
  NetworkFilesystem: 'DB_NETWORK_FILESYSTEM',
  SqliteDirectoryMissing: 'DB_SQLITE_DIRECTORY_MISSING',
  SqliteDriverMissing: 'DB_SQLITE_DRIVER_MISSING',
  InvalidConfig: 'DB_INVALID_CONFIG',
  TransactionState: 'DB_TRANSACTION_STATE',
  OutsideTransaction: 'DB_OUTSIDE_TRANSACTION',
  ReadTooLong: 'DB_READ_TOO_LONG',
  DatabaseNotRouted: 'DB_DATABASE_NOT_ROUTED',
  TenantPoolsExhausted: 'DB_TENANT_POOLS_EXHAUSTED',
  SessionStateRefused: 'DB_SESSION_STATE_REFUSED',
  KvCapExceeded: 'KV_CAP_EXCEEDED',
  KvInvalidArgument: 'KV_INVALID_ARGUMENT',
  CacheCapExceeded: 'CACHE_CAP_EXCEEDED',
  CacheInvalidArgument: 'CACHE_INVALID_ARGUMENT',
  CacheComputeTimeout: 'CACHE_COMPUTE_TIMEOUT',
  OrmInvalidModel: 'ORM_INVALID_MODEL',
  OrmInvalidIdentifier: 'ORM_INVALID_IDENTIFIER',
  OrmInvalidQuery: 'ORM_INVALID_QUERY',
  OrmConflict: 'ORM_CONFLICT',
  OrmTooManyRows: 'ORM_TOO_MANY_ROWS',
  OrmNotFound: 'ORM_NOT_FOUND',
  OrmSchemaSyncFailed: 'ORM_SCHEMA_SYNC_FAILED',
  OrmNarrowingRefused: 'ORM_NARROWING_REFUSED',
  OrmHealFailed: 'ORM_HEAL_FAILED',
  OrmMigrationInvalid: 'ORM_MIGRATION_INVALID',
  OrmMigrationChecksumMismatch: 'ORM_MIGRATION_CHECKSUM_MISMATCH',
  OrmMigrationFailed: 'ORM_MIGRATION_FAILED',
  ReplicationBehindRetention: 'REPLICATION_BEHIND_RETENTION',
  ReplicationInvalidTimestamp: 'REPLICATION_INVALID_TIMESTAMP',
  ReplicationClockDrift: 'REPLICATION_CLOCK_DRIFT',
} as const;
export type DataErrorCode = (typeof DataErrorCode)[keyof typeof DataErrorCode];

/** Which server an error came from, with nothing secret in it. */
export interface RedactedConnection {
  readonly backend: Backend;
  /** Host, Unix socket directory or SQLite file path. */
  readonly host?: string;
  readonly port?: number;
  readonly database?: string;
  readonly user?: string;
}

/** What a server reported alongside its error (Postgres ErrorResponse fields; SQLite fills `sqliteCode`). */
export interface ServerFields {
  readonly sqlstate?: string;
  /** SQLite's extended result code name, e.g. `SQLITE_CONSTRAINT_UNIQUE`. */
  readonly sqliteCode?: string;
  readonly severity?: string;
  readonly detail?: string;
  readonly hint?: string;
  /** 1-based character position in the statement. */
  readonly position?: number;
  readonly where?: string;
  readonly schema?: string;
  readonly table?: string;
  readonly column?: string;
  readonly dataType?: string;
  readonly constraint?: string;
  readonly routine?: string;
  /** Postgres: position inside an internally generated statement (a PL/pgSQL function's), and that statement. */
  readonly internalPosition?: number;
  readonly internalQuery?: string;
  /** Postgres: the server source file and line that raised the error. */
  readonly file?: string;
  readonly line?: number;
}

export interface DbErrorOptions extends ServerFields {
  readonly connection?: RedactedConnection;
  readonly callerStack?: string;
  readonly cause?: unknown;
  /** The statement's bound parameters; only attached when the context's `debug` is on. */
  readonly params?: readonly unknown[];
}

/** SQLSTATEs after which the same statement may well succeed: serialization, deadlock, lock, connection, capacity. */
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01', '55P03', '57P01', '57P02', '57P03', '53300', '08000', '08003', '08006', '08001', '08004']);
/** SQLite's contention codes (the primary code is the extended code's prefix). */
const RETRYABLE_SQLITE = /^SQLITE_(BUSY|LOCKED)(_|$)/;

/** Whether retrying may succeed, by code alone; the caller decides whether to retry. */
export function isRetryableCode(fields: Pick<ServerFields, 'sqlstate' | 'sqliteCode'>): boolean {
  if (fields.sqlstate !== undefined) return RETRYABLE_SQLSTATES.has(fields.sqlstate);
  if (fields.sqliteCode !== undefined) return RETRYABLE_SQLITE.test(fields.sqliteCode);
  return false;
}

/** Said of a statement on a table that does not exist: most often a model whose table was never created. */
export const MISSING_TABLE_HINT = 'create the table first: the Syncer or a migration (docs/schema.md), or orm.createTables(model) in tests and examples';

/** Postgres `undefined_table`, or SQLite's "no such table". */
function isMissingTable(message: string, fields: Pick<ServerFields, 'sqlstate' | 'sqliteCode'>): boolean {
  return fields.sqlstate === '42P01' || (fields.sqliteCode === 'SQLITE_ERROR' && message.startsWith('no such table'));
}

/** The server's fields (declared once, in `ServerFields`), set from the options by the constructor. */
export interface DbError extends ServerFields {}

/** An error from a data backend. `code` is Molo's; `sqlstate`/`sqliteCode` are the server's. */
export class DbError extends MoloError {
  static readonly code: DataErrorCode = DataErrorCode.QueryFailed;
  readonly connection?: RedactedConnection;
  /** Where the caller issued the statement (the driver's own frames are of no use to them). */
  callerStack?: string;
  readonly params?: readonly unknown[];
  /** Whether the same statement may succeed if tried again; never true when the outcome is unknown. */
  readonly retryable: boolean;

  constructor(message: string, options: DbErrorOptions = {}, code: DataErrorCode = DataErrorCode.QueryFailed, retryable?: boolean) {
    const missingTable = options.hint === undefined && isMissingTable(message, options);
    super(code, missingTable ? `${message} (${MISSING_TABLE_HINT})` : message, { cause: options.cause });
    const { connection, callerStack, cause: _cause, params, ...fields } = options;
    Object.assign(this, missingTable ? { ...fields, hint: MISSING_TABLE_HINT } : fields);
    this.connection = connection;
    this.callerStack = callerStack;
    if (params !== undefined) this.params = params;
    this.retryable = retryable ?? isRetryableCode(fields);
  }
}

/** What a data error's arguments make: as the kernel's `CodedErrorParts`, with `DbError`'s options and a per-instance `retryable`. */
interface DbErrorParts<Fields extends object> {
  readonly message: string;
  readonly fields?: Fields;
  readonly options?: DbErrorOptions;
  readonly retryable?: boolean;
}

/**
 * The base of one coded `DbError` class, the data layer's form of the kernel's `codedError`
 * (actors/coded-error.ts): `DbError` takes server fields and `retryable`, so it has its own.
 * `retryable` is the class's answer unless `build` returns one.
 */
function dbErrorClass<const Code extends DataErrorCode, Args extends unknown[], Fields extends object = object>(
  code: Code,
  retryable: boolean,
  build: (...args: Args) => string | DbErrorParts<Fields>,
): { new (...args: Args): DbError & Readonly<Fields>; readonly code: Code; readonly prototype: DbError } {
  class CodedDbError extends DbError {
    static override readonly code = code;
    constructor(...args: Args) {
      const parts = build(...args);
      const { message, fields, options, retryable: own } = typeof parts === 'string' ? { message: parts } : parts;
      super(message, options, code, own ?? retryable);
      if (fields !== undefined) Object.assign(this, fields);
    }
  }
  // The fields are assigned at run time, so the instance type is widened here, once, by hand.
  return CodedDbError as unknown as ReturnType<typeof dbErrorClass<Code, Args, Fields>>;
}

/** The statement ran past its timeout (the context's deadline, default 30 s, at most 300 s) and was cancelled. */
export class StatementTimeout extends dbErrorClass(DataErrorCode.StatementTimeout, false, (timeoutMs: number, options: DbErrorOptions = {}) => ({
  message: `statement timeout after ${timeoutMs} ms (context deadline / statementTimeout)`,
  fields: { timeoutMs },
  options,
})) {}

/** The connection was lost while a statement that only read was in flight: safe to retry. */
export class ConnectionLost extends dbErrorClass(DataErrorCode.ConnectionLost, true, (message: string, options: DbErrorOptions = {}) => ({
  message: `connection lost: ${message}`,
  options,
})) {}

/**
 * The connection was lost while a write or COMMIT was in flight: it may or may not have happened.
 * Never retryable: the caller must find out (read back, idempotency key) before doing it again.
 */
export class OutcomeUnknown extends dbErrorClass(DataErrorCode.OutcomeUnknown, false, (message: string, options: DbErrorOptions = {}) => ({
  message: `outcome unknown: ${message}`,
  options,
})) {}

/**
 * Could not open a connection (refused, unreachable, TLS failed, server not ready). Retryable,
 * except when the server refused the session for a reason that stays (an unknown database, say).
 */
export class ConnectFailed extends dbErrorClass(DataErrorCode.ConnectFailed, true, (message: string, options: DbErrorOptions = {}, retryable: boolean = true) => ({
  message: `connect failed: ${message}`,
  options,
  retryable,
})) {}

/** The server rejected the credentials. The message names the user and server, never the secret. */
export class AuthFailed extends dbErrorClass(DataErrorCode.AuthFailed, false, (message: string, options: DbErrorOptions = {}) => ({
  message: `authentication failed: ${message}`,
  options,
})) {}

/** The server asked for an auth method the client refuses (cleartext by default, MD5 unless `allowMd5`). */
export class AuthMethodRefused extends dbErrorClass(DataErrorCode.AuthMethodRefused, false, (method: string, option: string, options: DbErrorOptions = {}) => ({
  message: `server asked for ${method} authentication, refused (enable with ${option})`,
  fields: { method, option },
  options,
})) {}

/** The server sent bytes that are not a valid message in this state; the connection is closed. */
export class ProtocolError extends dbErrorClass(DataErrorCode.ProtocolError, false, (message: string, options: DbErrorOptions = {}) => ({
  message: `protocol error: ${message}`,
  options,
})) {}

/** More callers wait for a connection than the pool's `maxWaiters` (default 256): failed fast. */
export class PoolExhausted extends dbErrorClass(DataErrorCode.PoolExhausted, true, (maxWaiters: number, options: DbErrorOptions = {}) => ({
  message: `pool exhausted: ${maxWaiters} callers already waiting (pool.maxWaiters)`,
  fields: { maxWaiters },
  options,
})) {}

/** No connection became free within the pool's `acquireTimeoutMs` (default 5 s) or the context's deadline. */
export class AcquireTimeout extends dbErrorClass(DataErrorCode.AcquireTimeout, true, (timeoutMs: number, options: DbErrorOptions = {}) => {
  // A pool that could not open another connection says why: that is usually the whole story.
  const last = options.cause instanceof Error ? `; last connect attempt failed: ${options.cause.message}` : '';
  return { message: `no connection within ${timeoutMs} ms (pool.acquireTimeoutMs)${last}`, fields: { timeoutMs }, options };
}) {}

/** The pool or database was closed. */
export class PoolClosed extends dbErrorClass(DataErrorCode.PoolClosed, false, (options: DbErrorOptions = {}) => ({
  message: 'the pool is closed',
  options,
})) {}

/** A query returned more rows than its `maxRows` (default 10,000); read large results with `stream()`. */
export class TooManyRows extends dbErrorClass(DataErrorCode.TooManyRows, false, (maxRows: number, options: DbErrorOptions = {}) => ({
  message: `query returned more than ${maxRows} rows (maxRows); use stream() (a cursor) for large results`,
  fields: { maxRows },
  options,
})) {}

/** More bound parameters than the cap (1,024). */
export class TooManyParameters extends dbErrorClass(DataErrorCode.TooManyParameters, false, (count: number, max: number, options: DbErrorOptions = {}) => ({
  message: `${count} bound parameters, more than maxParameters (${max})`,
  fields: { count, max },
  options,
})) {}

/** A row, parameter or message larger than the cap (64 MiB). */
export class RowTooLarge extends dbErrorClass(DataErrorCode.RowTooLarge, false, (sizeBytes: number, maxBytes: number, options: DbErrorOptions = {}) => ({
  message: `${sizeBytes} bytes, more than maxRowBytes (${maxBytes})`,
  fields: { sizeBytes, maxBytes },
  options,
})) {}

/** A parameter value cannot be encoded for its type (a symbol, a function, NUL in text, a bad date). */
export class EncodeFailed extends dbErrorClass(DataErrorCode.EncodeFailed, false, (message: string, options: DbErrorOptions = {}) => ({
  message: `cannot encode parameter: ${message}`,
  options,
})) {}

/** A bounded request queue is full (pipelined queries in flight, SQLite worker requests); `.cap` names it. */
export class QueueFull extends dbErrorClass(DataErrorCode.QueueFull, true, (cap: string, limit: number, options: DbErrorOptions = {}) => ({
  message: `queue full: ${cap} (${limit})`,
  fields: { cap, limit },
  options,
})) {}

/** SQLITE_BUSY persisted through busy_timeout and the writer's retries. Counted in `molo_sqlite_busy_total`. */
export class SqliteBusy extends dbErrorClass(DataErrorCode.SqliteBusy, true, (message: string, options: DbErrorOptions = {}) => ({
  message: `database is busy after retries: ${message}`,
  options,
})) {}

/** The SQLite file lives on a network filesystem, where WAL's shared memory is unsafe (read from /proc/mounts). */
export class NetworkFilesystem extends dbErrorClass(DataErrorCode.NetworkFilesystem, false, (path: string, fsType: string, options: DbErrorOptions = {}) => ({
  message: `refusing ${path}: it is on a ${fsType} network filesystem, where SQLite WAL is unsafe`,
  fields: { path, fsType },
  options,
})) {}

/**
 * The SQLite file's directory does not exist, and `createDirectory` was not set. Not retryable:
 * a typo'd path or a volume not mounted stays so, and creating it silently would put the data
 * where nobody looks (on the container's own disk, say).
 */
export class SqliteDirectoryMissing extends dbErrorClass(DataErrorCode.SqliteDirectoryMissing, false, (file: string, directory: string, options: DbErrorOptions = {}) => ({
  message: `${file}: its directory ${directory} does not exist (create it, or pass createDirectory: true to openSqlite)`,
  fields: { path: file, directory },
  options,
})) {}

/** SQLite was asked for but `better-sqlite3` (a dependency of molo) is not there: left out of a bundle or a pruned install. */
export class SqliteDriverMissing extends dbErrorClass(DataErrorCode.SqliteDriverMissing, false, (options: DbErrorOptions = {}) => ({
  message: 'SQLite needs the package better-sqlite3, a dependency of molo that is not installed here: run `npm install better-sqlite3`',
  fields: { packageName: 'better-sqlite3' as const },
  options,
})) {}

/** A data-layer option is missing or outside its range; `.option` names it (and so the cap). */
export class InvalidDataConfig extends dbErrorClass(DataErrorCode.InvalidConfig, false, (option: string, message: string) => ({
  message: `invalid ${option}: ${message}`,
  fields: { option },
})) {}

/** A transaction was used after it ended, or nested work outlived its scope. */
export class TransactionStateError extends dbErrorClass(DataErrorCode.TransactionState, false, (message: string) => message) {}

/**
 * A write on a database from inside its own `transaction` (or SQLite `session`) callback, on the
 * database rather than on the callback's `tx`: refused on both backends, since it would run
 * outside the transaction (Postgres: committed on its own, whatever the transaction then does;
 * SQLite: waiting for the writer the transaction holds, until AcquireTimeout). Use `tx`.
 */
export class OutsideTransaction extends dbErrorClass(DataErrorCode.OutsideTransaction, false, (what: string) => `${what} on the database inside its own transaction callback would run outside the transaction: use the callback's tx (or outsideTransaction(() => ...) to mean it)`) {}

/**
 * A SQLite read transaction or stream stayed open longer than `maxReadMs` (default 30 s) and was
 * rolled back, so that WAL checkpoints can complete; read large results in shorter pieces.
 */
export class ReadTooLong extends dbErrorClass(DataErrorCode.ReadTooLong, false, (maxReadMs: number, options: DbErrorOptions = {}) => ({
  message: `read transaction or stream open longer than sqlite.maxReadMs (${maxReadMs} ms): rolled back so WAL checkpoints can complete`,
  fields: { maxReadMs },
  options,
})) {}

/**
 * A statement that leaves state in the server session (SET, RESET, LISTEN, UNLISTEN, PREPARE,
 * DEALLOCATE, DISCARD, temporary tables, session-level advisory locks, ...; SQLite: a PRAGMA that
 * sets, ATTACH, DETACH) on a shared connection, where the next caller would inherit it: run it
 * inside `db.session(fn)`, which pins one connection and resets it afterwards. `.statement` names
 * the kind.
 */
export class SessionStateRefused extends dbErrorClass(DataErrorCode.SessionStateRefused, false, (statement: string, where = 'a shared connection') => ({
  message: `${statement} changes session state, which would leak to the next caller of ${where}: run it inside db.session(fn), which pins one connection and resets it afterwards (SET LOCAL / set_config(..., true) / pg_advisory_xact_lock inside a transaction are fine)`,
  fields: { statement },
})) {}

/**
 * A call's `ctx.database` names another database than the one this handle serves: without a router it
 * would have run on the wrong database. Route tenants with `openTenantDatabases`.
 */
export class DatabaseNotRouted extends dbErrorClass(DataErrorCode.DatabaseNotRouted, false, (requested: string, served: string) => ({
  message: `ctx.database '${requested.slice(0, 100)}' asks for another database than this handle's ('${served}'): open per-tenant pools with openTenantDatabases`,
  fields: { requested: requested.slice(0, 100), served },
})) {}

/** Every open tenant pool is busy and `maxOpen` is reached: none can be closed to open another. */
export class TenantPoolsExhausted extends dbErrorClass(DataErrorCode.TenantPoolsExhausted, true, (maxOpen: number, requested: string) => ({
  message: `tenants.maxOpen: all ${maxOpen} tenant pools are in use, so none can be closed to open '${requested.slice(0, 100)}'`,
  fields: { maxOpen, requested: requested.slice(0, 100) },
})) {}
