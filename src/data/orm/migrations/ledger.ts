/**
 * The `schema_migrations` table: one row per migration applied (`kind` 'migration') and per heal
 * the Healer performed (`kind` 'heal'), with the SQL, its sha256, when, and for heals why and the
 * error code that triggered them. The migrator decides what to apply from the set of ids in it;
 * the Healer journals into it before it changes anything.
 */
import type { Queryable } from '../../database.js';
import type { Backend, Value } from '../../values.js';

export const MIGRATIONS_TABLE = 'schema_migrations';

/** Advisory lock keys (Postgres) serializing migration runs and heals across processes: 'molo' in ASCII, +1 for heals. */
export const MIGRATION_LOCK_KEY = 0x6d6f6c6f;
export const HEAL_LOCK_CLASS = 0x6d6f6c70;

export type LedgerKind = 'migration' | 'heal';

export interface LedgerRow {
  readonly id: string;
  readonly kind: LedgerKind;
  readonly checksum: string;
  readonly appliedAt: Date;
  readonly sql: string;
  /** Heals: why (the error message and the plan). */
  readonly reason: string | null;
  /** Heals: the SQLSTATE or SQLite code that triggered it. */
  readonly triggerCode: string | null;
  readonly durationMs: number | null;
}

const CREATE: Record<Backend, string> = {
  postgres: `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
  id text PRIMARY KEY,
  kind text NOT NULL,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL,
  sql text NOT NULL,
  reason text,
  trigger_code text,
  duration_ms integer
)`,
  sqlite: `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  checksum TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  sql TEXT NOT NULL,
  reason TEXT,
  trigger_code TEXT,
  duration_ms INTEGER
)`,
};

/** Whether the ledger table exists (checked first, so that a database that has it sees no DDL at all). */
export async function ledgerExists(db: Queryable): Promise<boolean> {
  if (db.backend === 'postgres') {
    const { rows } = await db.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [MIGRATIONS_TABLE]);
    return rows[0]?.present === true;
  }
  const { rows } = await db.query(`SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = $1`, [MIGRATIONS_TABLE]);
  return rows.length > 0;
}

/**
 * Creates the ledger when missing. On Postgres the creation runs under the migration advisory lock
 * inside `db` (which should be a transaction), since two processes' CREATE TABLE IF NOT EXISTS can
 * still collide on the catalog.
 */
export async function ensureLedger(db: Queryable): Promise<void> {
  if (await ledgerExists(db)) return;
  if (db.backend === 'postgres') await db.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
  await db.query(CREATE[db.backend]);
}

/** Every ledger row, oldest first; an absent table reads as empty. */
export async function readLedger(db: Queryable, kind?: LedgerKind): Promise<LedgerRow[]> {
  if (!(await ledgerExists(db))) return [];
  const where = kind === undefined ? '' : ' WHERE kind = $1';
  const { rows } = await db.query<{
    id: string;
    kind: string;
    checksum: string;
    applied_at: Date | string;
    sql: string;
    reason: string | null;
    trigger_code: string | null;
    duration_ms: number | bigint | null;
  }>(`SELECT id, kind, checksum, applied_at, sql, reason, trigger_code, duration_ms FROM ${MIGRATIONS_TABLE}${where} ORDER BY applied_at, id`, kind === undefined ? [] : [kind]);
  return rows.map((row) => ({
    id: row.id,
    kind: row.kind === 'heal' ? 'heal' : 'migration',
    checksum: row.checksum,
    appliedAt: row.applied_at instanceof Date ? row.applied_at : new Date(row.applied_at),
    sql: row.sql,
    reason: row.reason,
    triggerCode: row.trigger_code,
    durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
  }));
}

/** Whether `id` is recorded (checked again inside the applying transaction, after the lock). */
export async function isRecorded(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 AS present FROM ${MIGRATIONS_TABLE} WHERE id = $1`, [id]);
  return rows.length > 0;
}

export interface LedgerEntry {
  readonly id: string;
  readonly kind: LedgerKind;
  readonly checksum: string;
  readonly appliedAt: Date;
  readonly sql: string;
  readonly reason?: string;
  readonly triggerCode?: string;
  readonly durationMs?: number;
}

export async function record(db: Queryable, entry: LedgerEntry): Promise<void> {
  const params: Value[] = [
    entry.id,
    entry.kind,
    entry.checksum,
    entry.appliedAt.toISOString(),
    entry.sql,
    entry.reason ?? null,
    entry.triggerCode ?? null,
    entry.durationMs === undefined ? null : Math.round(entry.durationMs),
  ];
  await db.query(
    `INSERT INTO ${MIGRATIONS_TABLE} (id, kind, checksum, applied_at, sql, reason, trigger_code, duration_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    params,
  );
}

/** Sets the duration once the migration has run (the row goes in first, in the same transaction). */
export async function recordDuration(db: Queryable, id: string, durationMs: number): Promise<void> {
  await db.query(`UPDATE ${MIGRATIONS_TABLE} SET duration_ms = $1 WHERE id = $2`, [Math.round(durationMs), id]);
}
