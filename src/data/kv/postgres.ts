/**
 * The KV statements for Postgres. Versions come from a sequence: `nextval` is called only for a row
 * being written, and a write that waited for another writer of the row evaluates its SET list again
 * (`nextval` included) on the row version it finally updates, so a key's versions grow in commit
 * order under any concurrency. One write consumes one number, unless writers race (two creating the
 * same key, a write meeting the sweep): versions are monotonic, not dense.
 */
import type { DataContext } from '../context.js';
import type { Database } from '../database.js';
import { asBuffer, keyedMethods, toBuffer, toNumber, upkeepMethods, type KvSqlBackend } from './sql-backend.js';

const LIVE = '(expires_at IS NULL OR expires_at > $NOW::int8)';

export function postgresKv(db: Database, table: string): KvSqlBackend {
  const seq = `${table}_version_seq`;
  const next = `nextval('${seq}')`;
  const live = (now: number): string => LIVE.replace('$NOW', `$${now}`);

  const GET = `SELECT value, version FROM ${table} WHERE key = $1::bytea AND ${live(2)}`;
  const EXISTS = `SELECT 1 AS x FROM ${table} WHERE key = $1::bytea AND ${live(2)}`;
  const VERSION = `SELECT version FROM ${table} WHERE key = $1::bytea AND ${live(2)}`;
  // Update in place when the row is there (one sequence number), insert otherwise; a concurrent
  // insert of the same key turns the insert into an update, again with a fresh number.
  const SET = `WITH up AS (
      UPDATE ${table} SET value = $2::bytea, version = ${next}, expires_at = $3::int8, accessed_at = $4::int8 WHERE key = $1::bytea RETURNING version
    ), ins AS (
      INSERT INTO ${table} (key, value, version, expires_at, accessed_at)
      SELECT $1::bytea, $2::bytea, ${next}, $3::int8, $4::int8 WHERE NOT EXISTS (SELECT 1 FROM up)
      ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, version = ${next}, expires_at = EXCLUDED.expires_at, accessed_at = EXCLUDED.accessed_at
      RETURNING version
    )
    SELECT version FROM up UNION ALL SELECT version FROM ins`;
  // Take over an expired row, or insert when there is none; a live row (or a racing insert) wins.
  const INSERT_IF_ABSENT = `WITH up AS (
      UPDATE ${table} SET value = $2::bytea, version = ${next}, expires_at = $3::int8, accessed_at = $4::int8
      WHERE key = $1::bytea AND expires_at <= $4::int8 RETURNING version
    ), ins AS (
      INSERT INTO ${table} (key, value, version, expires_at, accessed_at)
      SELECT $1::bytea, $2::bytea, ${next}, $3::int8, $4::int8 WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE key = $1::bytea)
      ON CONFLICT (key) DO NOTHING
      RETURNING version
    )
    SELECT version FROM up UNION ALL SELECT version FROM ins`;
  const UPDATE_IF_VERSION = `UPDATE ${table} SET value = $2::bytea, version = ${next}, expires_at = $3::int8, accessed_at = $5::int8
    WHERE key = $1::bytea AND version = $4::int8 AND ${live(5)} RETURNING version`;
  const DELETE = `DELETE FROM ${table} WHERE key = $1::bytea RETURNING ${live(2)} AS live`;
  const DELETE_IF_VERSION = `DELETE FROM ${table} WHERE key = $1::bytea AND version = $2::int8 AND ${live(3)} RETURNING version`;
  const scan = (op: '>' | '>='): string =>
    `SELECT key FROM ${table} WHERE key ${op} $1::bytea AND key < $2::bytea AND ${live(3)} ORDER BY key LIMIT $4::int4`;
  const SCAN_AFTER = scan('>');
  const SCAN_FROM = scan('>=');
  // SKIP LOCKED: a row a writer holds is being renewed, not swept; the outer re-check of expires_at
  // runs on the row version the DELETE finally sees.
  const SWEEP = `DELETE FROM ${table} WHERE key IN (
      SELECT key FROM ${table} WHERE expires_at <= $1::int8 ORDER BY expires_at LIMIT $2::int4 FOR UPDATE SKIP LOCKED
    ) AND expires_at <= $1::int8`;
  const COUNT = `SELECT count(*) AS n FROM ${table}`;
  const TOUCH = `UPDATE ${table} SET accessed_at = $2::int8 WHERE key = $1::bytea AND accessed_at < $2::int8`;
  // By the index on accessed_at; SKIP LOCKED: a row a writer holds is being used right now.
  const EVICT = `DELETE FROM ${table} WHERE key IN (
      SELECT key FROM ${table} ORDER BY accessed_at LIMIT $1::int4 FOR UPDATE SKIP LOCKED
    )`;

  const versionOf = (rows: readonly Record<string, unknown>[]): number | null => (rows.length === 0 ? null : toNumber(rows[0]!.version));

  return {
    async init(ctx?: DataContext) {
      await db.transaction(
        async (tx) => {
          // Two processes opening the same store at once must not race on CREATE ... IF NOT EXISTS.
          await tx.query('SELECT pg_advisory_xact_lock(hashtext($1::text))', [`molo_kv:${table}`]);
          await tx.query(`CREATE SEQUENCE IF NOT EXISTS ${seq}`);
          await tx.query(`CREATE TABLE IF NOT EXISTS ${table} (key bytea PRIMARY KEY, value bytea NOT NULL, version int8 NOT NULL, expires_at int8)`);
          await tx.query(`CREATE INDEX IF NOT EXISTS ${table}_expires_at ON ${table} (expires_at) WHERE expires_at IS NOT NULL`);
          // The key cap's last-access column, added to tables made before it (a constant default: no rewrite).
          // Looked up first: ALTER TABLE locks the table even when the column is there.
          const has = await tx.query(`SELECT 1 AS x FROM pg_attribute WHERE attrelid = to_regclass($1::text) AND attname = 'accessed_at' AND NOT attisdropped`, [table]);
          if (has.rows.length === 0) await tx.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS accessed_at int8 NOT NULL DEFAULT 0`);
          await tx.query(`CREATE INDEX IF NOT EXISTS ${table}_accessed_at ON ${table} (accessed_at)`);
        },
        { ctx },
      );
    },
    async get(key, now, ctx) {
      const { rows } = await db.query(GET, [key, now], ctx);
      if (rows.length === 0) return undefined;
      return { value: toBuffer(rows[0]!.value), version: toNumber(rows[0]!.version) };
    },
    async exists(key, now, ctx) {
      return (await db.query(EXISTS, [key, now], ctx)).rows.length > 0;
    },
    async set(key, value, expiresAt, now, ctx) {
      return versionOf((await db.query(SET, [key, asBuffer(value), expiresAt, now], ctx)).rows)!;
    },
    async insertIfAbsent(key, value, expiresAt, now, ctx) {
      return versionOf((await db.query(INSERT_IF_ABSENT, [key, asBuffer(value), expiresAt, now], ctx)).rows);
    },
    async updateIfVersion(key, value, expiresAt, expected, now, ctx) {
      return versionOf((await db.query(UPDATE_IF_VERSION, [key, asBuffer(value), expiresAt, expected, now], ctx)).rows);
    },
    async version(key, now, ctx) {
      return versionOf((await db.query(VERSION, [key, now], ctx)).rows);
    },
    async delete(key, now, ctx) {
      const { rows } = await db.query(DELETE, [key, now], ctx);
      return rows.length > 0 && rows[0]!.live === true;
    },
    ...keyedMethods(db, { deleteIfVersion: DELETE_IF_VERSION, scanAfter: SCAN_AFTER, scanFrom: SCAN_FROM }),
    ...upkeepMethods(db, { sweep: SWEEP, count: COUNT, touch: TOUCH, evict: EVICT }),
  };
}

