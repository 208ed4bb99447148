// The data layer: one Database interface over our Postgres wire client and SQLite off the event loop.
export * from './values.js';
export * from './context.js';
export * from './errors.js';
export * from './kv/errors.js';
export * from './cache/errors.js';
export * from './orm/errors.js';
export * from './replication/errors.js';
export * from './database.js';
export type { DriverConnection, Connector } from './driver.js';
export { POOL_DEFAULTS, type PoolConfig } from './pool-config.js';
export { Pool, type Lease, type PoolOptions, type ReadyOptions } from './pool.js';
export { runTransaction, POSTGRES_DIALECT, SQLITE_DIALECT, type TransactionDialect } from './transaction.js';
export { outsideTransaction } from './transaction-scope.js';
export { createPostgresPool, postgresChild, PostgresDatabase, type PostgresPoolConfig } from './postgres.js';
export { openTenantDatabases, TenantDatabases, TENANT_CAPS, TENANT_DEFAULTS, type TenantDatabasesOptions } from './tenants.js';
export { parsePostgresUrl, postgresConfig, SSL_MODES, type PostgresSource, type SslMode } from './postgres-config.js';
export type { ListenOptions } from './postgres-listener.js';
export {
  connectPostgres,
  PgConnection,
  PgTypes,
  CopyInStream,
  CopyOutStream,
  type CustomType,
  type NotificationHandler,
  type PgNotification,
  type PgConfig,
} from './pg/index.js';
export { citext, hstore } from './pg/types/index.js';
export {
  openSqlite,
  sqliteChild,
  SqliteDatabase,
  SqliteConnection,
  SQLITE_DEFAULTS,
  SQLITE_LIMITS,
  SQLITE_SYNCHRONOUS,
  type SqliteConfig,
  type SqliteSynchronous,
  type SqliteStats,
  type CheckpointMode,
  type CheckpointReply,
} from './sqlite/index.js';
export * from './kv/index.js';
export * from './cache/index.js';
export { traced, DataSpanName } from './tracing.js';
export * from './replication/index.js';
