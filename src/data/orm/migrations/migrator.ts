/**
 * Applies the append-only migrations of a directory. What to apply is decided by the set of ids
 * already recorded, never by "the latest applied": a migration merged later with a lower number
 * (a gap filled) still runs. Before anything runs, every applied migration's file is checked
 * against its recorded checksum, and any mismatch aborts the run. Each migration runs in its own
 * transaction together with its ledger row, so it is applied and recorded, or neither.
 */
import type { DataContext } from '../../context.js';
import type { Database, Queryable } from '../../database.js';
import type { DriverConnection } from '../../driver.js';
import { DbError } from '../../errors.js';
import { POSTGRES_DIALECT, runTransaction, SQLITE_DIALECT } from '../../transaction.js';
import { MigrationChecksumMismatch, MigrationFailed } from '../errors.js';
import { silentLogger, type Logger } from '../../../telemetry/index.js';
import { loadMigrations, type MigrationSource } from './files.js';
import { ensureLedger, isRecorded, MIGRATION_LOCK_KEY, readLedger, record, type LedgerRow } from './ledger.js';
import { splitStatements } from './split.js';

export type MigrationState = 'applied' | 'pending' | 'changed' | 'missing';

export interface MigrationStatusEntry {
  readonly id: string;
  /**
   * applied: recorded, file unchanged; pending: not recorded; changed: recorded, but the file's
   * checksum differs (`up` refuses to run); missing: recorded, but no file has that id any more.
   */
  readonly state: MigrationState;
  readonly file?: string;
  readonly checksum?: string;
  readonly recordedChecksum?: string;
  readonly appliedAt?: Date;
}

export interface MigrationStatus {
  readonly entries: readonly MigrationStatusEntry[];
  readonly applied: number;
  readonly pending: number;
  readonly changed: number;
  readonly missing: number;
  /** Heals journaled by the Healer (reviewed from `migrations/auto/`). */
  readonly heals: number;
}

export type MigrationProgress =
  | { readonly event: 'applying'; readonly id: string; readonly index: number; readonly total: number }
  | { readonly event: 'applied'; readonly id: string; readonly index: number; readonly total: number; readonly durationMs: number }
  | { readonly event: 'skipped'; readonly id: string; readonly index: number; readonly total: number; readonly why: string };

export interface MigratorOptions {
  /** The migrations directory (`migrations/`). */
  readonly dir: string;
  readonly logger?: Logger;
}

export interface UpOptions {
  readonly ctx?: DataContext;
  readonly onProgress?: (progress: MigrationProgress) => void;
}

export class Migrator {
  readonly #db: Database;
  readonly #dir: string;
  readonly #log: Logger;

  constructor(db: Database, options: MigratorOptions) {
    this.#db = db;
    this.#dir = options.dir;
    this.#log = options.logger ?? silentLogger;
  }

  /** Every migration on disk and in the ledger, with its state. */
  async status(ctx?: DataContext): Promise<MigrationStatus> {
    const [sources, ledger] = await Promise.all([loadMigrations(this.#dir, this.#db.backend), readLedger(this.#db)]);
    return compare(sources, ledger, ctx);
  }

  /**
   * Applies every pending migration in order, each in its own transaction; resolves with the ids
   * applied. Throws MigrationChecksumMismatch (before applying anything) when an applied file
   * changed, MigrationFailed when a migration's SQL fails (the ones before it stay applied).
   */
  async up(options: UpOptions = {}): Promise<string[]> {
    const { ctx, onProgress } = options;
    const sources = await loadMigrations(this.#dir, this.#db.backend);
    const status = compare(sources, await readLedger(this.#db));
    const changed = status.entries.filter((entry) => entry.state === 'changed');
    if (changed.length > 0) {
      const error = new MigrationChecksumMismatch(
        changed.map((entry) => ({ id: entry.id, file: entry.file!, recorded: entry.recordedChecksum!, actual: entry.checksum! })),
      );
      this.#log.error({ event: 'orm.migrations.checksum_mismatch', ids: changed.map((entry) => entry.id), err: error }, error.message);
      throw error;
    }
    const pendingIds = new Set(status.entries.filter((entry) => entry.state === 'pending').map((entry) => entry.id));
    const pending = sources.filter((source) => pendingIds.has(source.id));
    const applied: string[] = [];
    for (let index = 0; index < pending.length; index++) {
      const migration = pending[index]!;
      const total = pending.length;
      onProgress?.({ event: 'applying', id: migration.id, index, total });
      const started = performance.now();
      const ran = await this.#apply(migration, ctx);
      if (!ran) {
        onProgress?.({ event: 'skipped', id: migration.id, index, total, why: 'applied meanwhile by another process' });
        continue;
      }
      const durationMs = performance.now() - started;
      applied.push(migration.id);
      this.#log.info({ event: 'orm.migrations.applied', id: migration.id, file: migration.file, durationMs: Math.round(durationMs) }, `migration ${migration.id} applied`);
      onProgress?.({ event: 'applied', id: migration.id, index, total, durationMs });
    }
    return applied;
  }

  /** Runs one migration and records it, in one transaction; false when another process got there first. */
  async #apply(migration: MigrationSource, ctx: DataContext | undefined): Promise<boolean> {
    try {
      // A migration may hold session state (`SET statement_timeout = 0`, as pg_dump writes, a PRAGMA):
      // refused in a pooled transaction, so it runs in a transaction inside a pinned session, which
      // is reset before its connection serves anyone else.
      return await this.#db.session((session) =>
        runTransaction(
          session as unknown as DriverConnection,
          session.backend === 'postgres' ? POSTGRES_DIALECT : SQLITE_DIALECT,
          async (tx) => {
          await ensureLedger(tx);
          if (tx.backend === 'postgres') await tx.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
          if (await isRecorded(tx, migration.id)) return false;
          const started = performance.now();
          await runScript(tx, migration.sql);
          await record(tx, {
            id: migration.id,
            kind: 'migration',
            checksum: migration.checksum,
            appliedAt: new Date(),
            sql: migration.sql,
            durationMs: performance.now() - started,
          });
          return true;
        },
          ctx === undefined ? {} : { ctx },
        ),
        ctx,
      );
    } catch (error) {
      const failure = new MigrationFailed(migration.id, error instanceof Error ? error.message : String(error), {
        cause: error,
        ...(error instanceof DbError && error.sqlstate !== undefined ? { sqlstate: error.sqlstate } : {}),
        ...(error instanceof DbError && error.sqliteCode !== undefined ? { sqliteCode: error.sqliteCode } : {}),
      });
      this.#log.error({ event: 'orm.migrations.failed', id: migration.id, file: migration.file, err: failure }, failure.message);
      throw failure;
    }
  }
}

/**
 * Runs a migration's text. Postgres takes the whole file in one simple-protocol Query (the server
 * splits it, dollar quotes and all); SQLite prepares one statement at a time, so the file is split.
 */
export async function runScript(db: Queryable, sql: string, ctx?: DataContext): Promise<void> {
  const statements = splitStatements(sql, db.backend);
  if (statements.length === 0) return;
  if (db.backend === 'postgres') {
    await db.query(sql, undefined, ctx);
    return;
  }
  for (const statement of statements) await db.query(statement, undefined, ctx);
}

function compare(sources: readonly MigrationSource[], ledger: readonly LedgerRow[], _ctx?: DataContext): MigrationStatus {
  const recorded = new Map<string, LedgerRow>();
  let heals = 0;
  for (const row of ledger) {
    if (row.kind === 'heal') heals++;
    else recorded.set(row.id, row);
  }
  const entries: MigrationStatusEntry[] = [];
  const seen = new Set<string>();
  for (const source of sources) {
    seen.add(source.id);
    const row = recorded.get(source.id);
    if (row === undefined) entries.push({ id: source.id, state: 'pending', file: source.file, checksum: source.checksum });
    else
      entries.push({
        id: source.id,
        state: row.checksum === source.checksum ? 'applied' : 'changed',
        file: source.file,
        checksum: source.checksum,
        recordedChecksum: row.checksum,
        appliedAt: row.appliedAt,
      });
  }
  for (const row of recorded.values()) {
    if (!seen.has(row.id)) entries.push({ id: row.id, state: 'missing', recordedChecksum: row.checksum, appliedAt: row.appliedAt });
  }
  const count = (state: MigrationState): number => entries.filter((entry) => entry.state === state).length;
  return { entries, applied: count('applied'), pending: count('pending'), changed: count('changed'), missing: count('missing'), heals };
}
