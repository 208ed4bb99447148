/**
 * The Syncer: diffs models against the live schema and applies additive DDL only (create tables,
 * add columns, create indexes and unique indexes), one transaction per table. It never narrows,
 * renames, drops or changes a type: what it leaves alone is reported as drift (the Healer widens a
 * too-narrow column when a write needs it; the rest is a migration's job).
 *
 * A database already in line costs the introspection queries and nothing else: no DDL, no
 * transaction. Tables that need changes are locked (Postgres: an advisory lock per table, SQLite:
 * the write lock of BEGIN IMMEDIATE), introspected again and diffed again inside their
 * transaction, so two processes booting together apply each change once.
 *
 * At boot (`boot()`): with `syncOnBoot` (default true) a failure throws SchemaSyncFailed and the
 * boot should stop; with `syncOnBoot: false` nothing is applied, and a schema that is not in line
 * (or cannot be read) logs a loud warning and turns `health()` unhealthy with the reason, until a
 * later `sync()` succeeds. Heals then create what is missing as statements need it.
 */
import type { DataContext } from '../context.js';
import type { Database, Queryable } from '../database.js';
import { DbError } from '../errors.js';
import { SchemaSyncFailed } from './errors.js';
import { silentLogger, type Logger } from '../../telemetry/index.js';
import { dialectFor, type Dialect } from './dialect.js';
import { rebuildTable } from './heal/sqlite-rebuild.js';
import { HEAL_LOCK_CLASS } from './migrations/ledger.js';
import type { AnyModel, ModelMeta } from './model.js';
import { diffModel, metaOf, type Drift, type SchemaChange, type TablePlan } from './schema/diff.js';
import { introspect } from './schema/introspect.js';

export interface SyncerOptions {
  /** The models (or their `meta`) whose tables the database must have. */
  readonly models: readonly (AnyModel | ModelMeta)[];
  /** Boot behaviour: true (default) applies and throws on failure; false applies nothing and degrades health instead. */
  readonly syncOnBoot?: boolean;
  readonly logger?: Logger;
}

export interface SyncReport {
  /** The tables that had changes, with what was applied. */
  readonly applied: readonly TablePlan[];
  /** DDL statements issued (0 when the database was already in line). */
  readonly statements: number;
  /** What sync leaves alone, for every table. */
  readonly drift: readonly Drift[];
  readonly durationMs: number;
}

export interface SchemaHealth {
  readonly healthy: boolean;
  readonly reason?: string;
}

export class Syncer {
  readonly #db: Database;
  readonly #models: readonly ModelMeta[];
  readonly #dialect: Dialect;
  readonly #log: Logger;
  readonly #syncOnBoot: boolean;
  #health: SchemaHealth = { healthy: true };

  constructor(db: Database, options: SyncerOptions) {
    this.#db = db;
    this.#models = options.models.map(metaOf);
    this.#dialect = dialectFor(db.backend);
    this.#log = options.logger ?? silentLogger;
    this.#syncOnBoot = options.syncOnBoot ?? true;
    const tables = new Set<string>();
    for (const meta of this.#models) {
      if (tables.has(meta.table)) throw new SchemaSyncFailed(meta.table, 'two models declare this table');
      tables.add(meta.table);
    }
  }

  /** Healthy unless a boot with `syncOnBoot: false` found the schema out of line (and no sync fixed it since). */
  health(): SchemaHealth {
    return this.#health;
  }

  /** What sync would do, table by table; runs no DDL. */
  async plan(ctx?: DataContext): Promise<TablePlan[]> {
    const snapshot = await introspect(this.#db, this.#models.map((meta) => meta.table), ctx);
    return this.#models.map((meta) => diffModel(meta, snapshot, this.#dialect));
  }

  /** Applies the additive changes, one transaction per table. Throws SchemaSyncFailed naming the table that failed. */
  async sync(ctx?: DataContext): Promise<SyncReport> {
    const started = performance.now();
    let plans: TablePlan[];
    try {
      plans = await this.plan(ctx);
    } catch (error) {
      throw failure('(introspection)', error);
    }
    const applied: TablePlan[] = [];
    let statements = 0;
    const drift: Drift[] = [];
    for (const plan of plans) {
      if (plan.changes.length === 0) {
        drift.push(...plan.drift);
        continue;
      }
      const meta = this.#models.find((m) => m.table === plan.table)!;
      let done: { plan: TablePlan; statements: string[] };
      try {
        done = await this.#applyTable(meta, ctx);
      } catch (error) {
        const wrapped = failure(plan.table, error);
        this.#log.error({ event: 'orm.sync.failed', table: plan.table, err: wrapped }, wrapped.message);
        throw wrapped;
      }
      drift.push(...done.plan.drift);
      if (done.statements.length > 0) {
        applied.push(done.plan);
        statements += done.statements.length;
        this.#log.info({ event: 'orm.sync.applied', table: plan.table, statements: done.statements }, `schema sync: ${plan.table} (${done.statements.length} statement(s))`);
      }
    }
    for (const entry of drift) {
      if (entry.kind !== 'type-wider' && entry.kind !== 'extra-column') this.#log.warn({ event: 'orm.sync.drift', ...entry }, `schema drift on ${entry.table}${entry.column === undefined ? '' : `.${entry.column}`}: ${entry.kind}`);
    }
    this.#health = { healthy: true };
    return { applied, statements, drift, durationMs: performance.now() - started };
  }

  /**
   * The boot step. `syncOnBoot` true: sync, and let SchemaSyncFailed abort the boot. False: no
   * DDL; if the schema is not in line, a loud warning and unhealthy `health()` (resolves undefined).
   */
  async boot(ctx?: DataContext): Promise<SyncReport | undefined> {
    if (this.#syncOnBoot) return this.sync(ctx);
    let reason: string | undefined;
    try {
      const pending = (await this.plan(ctx)).flatMap((plan) => plan.changes.map(describe));
      if (pending.length > 0) reason = `schema not in line with the models and syncOnBoot is false: ${pending.slice(0, 10).join('; ')}${pending.length > 10 ? `; and ${pending.length - 10} more` : ''}`;
    } catch (error) {
      reason = `schema could not be read: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (reason === undefined) {
      this.#health = { healthy: true };
      return undefined;
    }
    this.#health = { healthy: false, reason };
    this.#log.warn({ event: 'orm.sync.degraded', reason }, `SCHEMA OUT OF SYNC (syncOnBoot: false): ${reason}`);
    return undefined;
  }

  /** One table: lock, introspect and diff again, apply; one transaction (SQLite rebuilds: the rebuild's). */
  async #applyTable(meta: ModelMeta, ctx: DataContext | undefined): Promise<{ plan: TablePlan; statements: string[] }> {
    if (this.#db.backend === 'sqlite') {
      // A rebuild runs its own transaction with foreign keys off, so it cannot nest in ours: decide first.
      const plan = diffModel(meta, await introspect(this.#db, [meta.table], ctx), this.#dialect);
      if (plan.changes.some((change) => change.kind === 'addColumn' && change.rebuild)) return this.#rebuild(meta, plan, ctx);
    }
    return this.#db.transaction(
      async (tx) => {
        if (tx.backend === 'postgres') await tx.query(`SELECT pg_advisory_xact_lock(${HEAL_LOCK_CLASS}, hashtext($1))`, [meta.table], ctx);
        const plan = diffModel(meta, await introspect(tx, [meta.table], ctx), this.#dialect);
        const statements: string[] = [];
        const drift = [...plan.drift];
        for (const change of plan.changes) {
          const sql = await applyChange(tx, change, ctx);
          statements.push(...sql);
          if (change.kind === 'addColumn' && sql[0] === change.sqlIfRows) drift.push({ table: change.table, column: change.column, kind: 'relaxed', wanted: 'notNull' });
        }
        return { plan: { ...plan, drift }, statements };
      },
      ctx === undefined ? {} : { ctx },
    );
  }

  async #rebuild(meta: ModelMeta, plan: TablePlan, ctx: DataContext | undefined): Promise<{ plan: TablePlan; statements: string[] }> {
    const addColumns: string[] = [];
    const after: string[] = [];
    for (const change of plan.changes) {
      if (change.kind === 'addColumn' && change.rebuild) addColumns.push(change.sql);
      else if (change.kind === 'addColumn' || change.kind === 'createIndex') after.push(change.sql);
    }
    const result = await rebuildTable(this.#db, meta.table, { addColumns, after, ...(ctx === undefined ? {} : { ctx }) });
    return { plan, statements: [...result.statements] };
  }
}

/** Runs one change; returns the statements issued. */
async function applyChange(tx: Queryable, change: SchemaChange, ctx: DataContext | undefined): Promise<string[]> {
  switch (change.kind) {
    case 'createTable':
      for (const sql of change.sql) await tx.query(sql, undefined, ctx);
      return [...change.sql];
    case 'addColumn': {
      let sql = change.sql;
      if (change.sqlIfRows !== undefined) {
        const { rows } = await tx.query(`SELECT 1 AS one FROM ${dialectFor(tx.backend).quoteIdent(change.table)} LIMIT 1`, undefined, ctx);
        if (rows.length > 0) sql = change.sqlIfRows;
      }
      await tx.query(sql, undefined, ctx);
      return [sql];
    }
    case 'createIndex':
      await tx.query(change.sql, undefined, ctx);
      return [change.sql];
  }
}

function describe(change: SchemaChange): string {
  switch (change.kind) {
    case 'createTable':
      return `table ${change.table} missing`;
    case 'addColumn':
      return `column ${change.table}.${change.column} missing`;
    case 'createIndex':
      return `${change.unique ? 'unique index' : 'index'} ${change.index} on ${change.table} missing`;
  }
}

function failure(table: string, error: unknown): SchemaSyncFailed {
  if (error instanceof SchemaSyncFailed) return error;
  const fields =
    error instanceof DbError
      ? { ...(error.sqlstate === undefined ? {} : { sqlstate: error.sqlstate }), ...(error.sqliteCode === undefined ? {} : { sqliteCode: error.sqliteCode }) }
      : {};
  return new SchemaSyncFailed(table, error instanceof Error ? error.message : String(error), { cause: error, ...fields });
}
