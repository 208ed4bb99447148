// SQLite off the event loop: better-sqlite3 in supervised worker threads, one writer and N readers.
export { openSqlite, sqliteChild } from './open.js';
export { SqliteDatabase } from './database.js';
export { SqliteConnection } from './connection.js';
export { SQLITE_DEFAULT_SYNCHRONOUS, SQLITE_DEFAULTS, SQLITE_LIMITS, SQLITE_SYNCHRONOUS, type SqliteConfig, type SqliteSynchronous } from './config.js';
export { NETWORK_FILESYSTEMS, isNetworkFilesystem, mountOf, networkMountOf, parseMounts, refuseNetworkFilesystem, type Mount } from './mounts.js';
export type { CheckpointMode, CheckpointReply } from './protocol.js';
export type { SqliteStats } from './telemetry.js';
