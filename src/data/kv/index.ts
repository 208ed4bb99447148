// KV stores: one interface over memory, SQLite and Postgres, with TTLs, paged scans and versioned compare-and-set.
export { DEFAULT_SCAN_LIMIT, KV_LIMITS, type KvCasResult, type KvEntry, type KvScanOptions, type KvScanPage, type KvSetOptions, type KvStore } from './store.js';
export { KV_SWEEP_DEFAULTS, type KvCommonOptions } from './options.js';
export { createMemoryKv, MemoryKvStore, type MemoryKvOptions, type MemoryKvStats } from './memory.js';
export { openKv, SqlKvStore, type SqlKvOptions, type SqlKvStats } from './sql-store.js';
export { KV_DEFAULT_SYNCHRONOUS, openSqliteKv } from './open.js';
export { decodeJson, decodeText, encodeJson, encodeText, getJson, getJsonEntry, getText, setJson, setText } from './codec.js';
