// The data layer: one Database interface over our Postgres wire client and SQLite off the event loop.
export * from './values.js';
export * from './context.js';
export * from './errors.js';
export * from './database.js';
export type { DriverConnection, Connector } from './driver.js';
export { POOL_DEFAULTS, type PoolConfig } from './pool-config.js';
export { Pool, type Lease, type PoolOptions } from './pool.js';
export { runTransaction, POSTGRES_DIALECT, SQLITE_DIALECT, type TransactionDialect } from './transaction.js';
