/**
 * Molo's Postgres driver: one connection = one actor owning one socket, pipelining statements,
 * with a prepared-statement cache, cursors, COPY, LISTEN/NOTIFY and cancel requests.
 */
export { connectPostgres, PgConnection, MAX_ROWS_CAP, type ConnectOptions } from './client.js';
export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_IN_FLIGHT,
  DEFAULT_MAX_QUEUED,
  DEFAULT_PG_HOST,
  DEFAULT_PG_PORT,
  DEFAULT_STATEMENT_CACHE_SIZE,
  MAX_CONNECT_TIMEOUT_MS,
  MAX_IN_FLIGHT_CAP,
  MAX_QUEUED_CAP,
  MAX_STATEMENT_CACHE_SIZE,
  defaultPgTypes,
  resolvePgConfig,
  type PasswordSource,
  type PgConfig,
  type ResolvedPgConfig,
} from './config.js';
export { CopyInStream, CopyOutStream } from './copy-streams.js';
export { COPY_HIGH_WATER_BYTES } from './copy.js';
export { DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE } from './cursor.js';
export { MAX_CHANNELS, quoteIdentifier, type NotificationHandler, type PgNotification } from './notifications.js';
export { isReadOnlySql } from './classify.js';
export type { PgConnectionStats } from './requests.js';
export { PgTypes, type CustomType } from './types/index.js';
