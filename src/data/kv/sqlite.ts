/**
 * The KV statements for SQLite.
 *
 * Versions come from a counter row (`<table>_meta`): each write reads it plus one, and triggers on
 * the table move it forward, inside the write's own statement (so its own transaction). SQLite has
 * one writer, so nothing interleaves between the read and the move.
 *
 * Values larger than CHUNK_BYTES are stored in pieces (`<table>_chunk`), written in one transaction
 * and read in one read transaction: a statement crossing to the SQLite worker thread must fit the
 * placement's payload cap (1 MiB by default), while a value may be 16 MiB. Triggers drop a value's
 * pieces when its row is overwritten or deleted (the sweep included).
 */
import type { DataContext } from '../context.js';
import type { Database, Queryable } from '../database.js';
import { asBuffer, keyedMethods, toBuffer, toNumber, upkeepMethods, type KvSqlBackend } from './sql-backend.js';

/** Largest value stored inline, and the size of the pieces of larger ones. */
export const CHUNK_BYTES = 256 * 1024;

const EMPTY = Buffer.alloc(0);

export function sqliteKv(db: Database, table: string): KvSqlBackend {
  const meta = `${table}_meta`;
  const chunkTable = `${table}_chunk`;
  const nextVersion = `(SELECT value + 1 FROM ${meta} WHERE name = 'version')`;
  const live = (n: number): string => `(expires_at IS NULL OR expires_at > $${n})`;

  const GET = `SELECT value, version, chunks FROM ${table} WHERE key = $1 AND ${live(2)}`;
  const EXISTS = `SELECT 1 AS x FROM ${table} WHERE key = $1 AND ${live(2)}`;
  const VERSION = `SELECT version FROM ${table} WHERE key = $1 AND ${live(2)}`;
  const CHUNKS = `SELECT bytes FROM ${chunkTable} WHERE key = $1 ORDER BY seq`;
  const INSERT_CHUNK = `INSERT OR REPLACE INTO ${chunkTable} (key, seq, bytes) VALUES ($1, $2, $3)`;
  // $5 is the write's time, its last access too.
  const UPSERT = `INSERT INTO ${table} (key, value, version, expires_at, chunks, accessed_at) VALUES ($1, $2, ${nextVersion}, $3, $4, $5)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version, expires_at = excluded.expires_at, chunks = excluded.chunks, accessed_at = excluded.accessed_at`;
  const SET = `${UPSERT} RETURNING version`;
  // An expired row may be taken over; a live one wins (the DO UPDATE's WHERE fails, nothing returns).
  const INSERT_IF_ABSENT = `${UPSERT} WHERE ${table}.expires_at <= $5 RETURNING version`;
  const UPDATE_IF_VERSION = `UPDATE ${table} SET value = $2, version = ${nextVersion}, expires_at = $3, chunks = $4, accessed_at = $6
    WHERE key = $1 AND version = $5 AND ${live(6)} RETURNING version`;
  const DELETE = `DELETE FROM ${table} WHERE key = $1 RETURNING ${live(2)} AS live`;
  const DELETE_IF_VERSION = `DELETE FROM ${table} WHERE key = $1 AND version = $2 AND ${live(3)} RETURNING version`;
  const scan = (op: '>' | '>='): string => `SELECT key FROM ${table} WHERE key ${op} $1 AND key < $2 AND ${live(3)} ORDER BY key LIMIT $4`;
  const SCAN_AFTER = scan('>');
  const SCAN_FROM = scan('>=');
  const SWEEP = `DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`;
  const COUNT = `SELECT count(*) AS n FROM ${table}`;
  const TOUCH = `UPDATE ${table} SET accessed_at = $2 WHERE key = $1 AND accessed_at < $2`;
  const EVICT = `DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} ORDER BY accessed_at LIMIT $1)`;
  const HAS_ACCESSED = `SELECT 1 AS x FROM pragma_table_info('${table}') WHERE name = 'accessed_at'`;
  // The key cap's last-access column, for tables made before it (SQLite has no ADD COLUMN IF NOT EXISTS).
  const ADD_ACCESSED = `ALTER TABLE ${table} ADD COLUMN accessed_at INTEGER NOT NULL DEFAULT 0`;
  const ACCESSED_INDEX = `CREATE INDEX IF NOT EXISTS ${table}_accessed_at ON ${table} (accessed_at)`;

  const SCHEMA = [
    `CREATE TABLE IF NOT EXISTS ${table} (key BLOB PRIMARY KEY, value BLOB NOT NULL, version INTEGER NOT NULL, expires_at INTEGER, chunks INTEGER NOT NULL DEFAULT 0, accessed_at INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID`,
    `CREATE INDEX IF NOT EXISTS ${table}_expires_at ON ${table} (expires_at) WHERE expires_at IS NOT NULL`,
    `CREATE TABLE IF NOT EXISTS ${meta} (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID`,
    `INSERT OR IGNORE INTO ${meta} (name, value) VALUES ('version', 0)`,
    `CREATE TABLE IF NOT EXISTS ${chunkTable} (key BLOB NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (key, seq)) WITHOUT ROWID`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_version_insert AFTER INSERT ON ${table}
      BEGIN UPDATE ${meta} SET value = NEW.version WHERE name = 'version' AND value < NEW.version; END`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_version_update AFTER UPDATE OF version ON ${table}
      BEGIN UPDATE ${meta} SET value = NEW.version WHERE name = 'version' AND value < NEW.version; END`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_chunks_update AFTER UPDATE OF version ON ${table} WHEN OLD.chunks > 0
      BEGIN DELETE FROM ${chunkTable} WHERE key = OLD.key; END`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_chunks_delete AFTER DELETE ON ${table} WHEN OLD.chunks > 0
      BEGIN DELETE FROM ${chunkTable} WHERE key = OLD.key; END`,
  ];

  const versionOf = (rows: readonly Record<string, unknown>[]): number | null => (rows.length === 0 ? null : toNumber(rows[0]!.version));

  /**
   * Runs a write whose statement is `sql` with (key, stored value, expiresAt, chunks, ...extra):
   * inline values in one statement, large ones with their pieces in one transaction.
   */
  const write = async (sql: string, key: Buffer, value: Uint8Array, expiresAt: number | null, extra: readonly number[], ctx?: DataContext): Promise<number | null> => {
    if (value.byteLength <= CHUNK_BYTES) return versionOf((await db.query(sql, [key, asBuffer(value), expiresAt, 0, ...extra], ctx)).rows);
    const pieces = Math.ceil(value.byteLength / CHUNK_BYTES);
    return db.transaction(
      async (tx) => {
        const version = versionOf((await tx.query(sql, [key, EMPTY, expiresAt, pieces, ...extra], ctx)).rows);
        if (version === null) return null;
        const inserts: Promise<unknown>[] = [];
        for (let i = 0; i < pieces; i++) {
          const piece = asBuffer(value.subarray(i * CHUNK_BYTES, Math.min(value.byteLength, (i + 1) * CHUNK_BYTES)));
          inserts.push(tx.query(INSERT_CHUNK, [key, i, piece], ctx));
        }
        await Promise.all(inserts);
        return version;
      },
      { ctx },
    );
  };

  /** A large value's pieces, read with its row in one snapshot. */
  const readChunked = (key: Buffer, now: number, ctx?: DataContext) =>
    db.transaction(
      async (tx: Queryable) => {
        const { rows } = await tx.query(GET, [key, now], ctx);
        if (rows.length === 0) return undefined;
        const version = toNumber(rows[0]!.version);
        const pieces = toNumber(rows[0]!.chunks);
        if (pieces === 0) return { value: toBuffer(rows[0]!.value), version };
        const chunks = (await tx.query(CHUNKS, [key], ctx)).rows.map((row) => toBuffer(row.bytes));
        if (chunks.length !== pieces) throw new Error(`kv: ${pieces} pieces expected for a value, found ${chunks.length}`);
        return { value: Buffer.concat(chunks), version };
      },
      { readOnly: true, ctx },
    );

  return {
    async init(ctx?: DataContext) {
      await db.transaction(
        async (tx) => {
          for (const statement of SCHEMA) await tx.query(statement);
          // Inside the write transaction: a second store opening at once sees the column once this commits.
          if ((await tx.query(HAS_ACCESSED)).rows.length === 0) await tx.query(ADD_ACCESSED);
          await tx.query(ACCESSED_INDEX);
        },
        { ctx },
      );
    },
    async get(key, now, ctx) {
      const { rows } = await db.query(GET, [key, now], ctx);
      if (rows.length === 0) return undefined;
      if (toNumber(rows[0]!.chunks) > 0) return readChunked(key, now, ctx);
      return { value: toBuffer(rows[0]!.value), version: toNumber(rows[0]!.version) };
    },
    async exists(key, now, ctx) {
      return (await db.query(EXISTS, [key, now], ctx)).rows.length > 0;
    },
    async set(key, value, expiresAt, now, ctx) {
      return (await write(SET, key, value, expiresAt, [now], ctx))!;
    },
    insertIfAbsent(key, value, expiresAt, now, ctx) {
      return write(INSERT_IF_ABSENT, key, value, expiresAt, [now], ctx);
    },
    updateIfVersion(key, value, expiresAt, expected, now, ctx) {
      return write(UPDATE_IF_VERSION, key, value, expiresAt, [expected, now], ctx);
    },
    async version(key, now, ctx) {
      return versionOf((await db.query(VERSION, [key, now], ctx)).rows);
    },
    async delete(key, now, ctx) {
      const { rows } = await db.query(DELETE, [key, now], ctx);
      return rows.length > 0 && toNumber(rows[0]!.live) === 1;
    },
    ...keyedMethods(db, { deleteIfVersion: DELETE_IF_VERSION, scanAfter: SCAN_AFTER, scanFrom: SCAN_FROM }),
    ...upkeepMethods(db, { sweep: SWEEP, count: COUNT, touch: TOUCH, evict: EVICT }),
  };
}

