/**
 * The Healer: the ORM offers it every failed statement (`heal(error, context)`); it classifies the
 * error (pure), resolves the DDL against the models and the live schema, journals it (file, then
 * ledger row), applies it, and returns the record, after which the ORM retries the statement once.
 *
 * Where the DDL runs:
 * - Postgres, outside a transaction: its own transaction, under an advisory lock per table with
 *   `SET LOCAL lock_timeout`; a lock timeout (55P03) is retried a few times with backoff, since
 *   ALTER COLUMN TYPE waits for every reader of the table.
 * - Postgres, inside the caller's transaction (the ORM already rolled back to the statement's
 *   savepoint): a savepoint of that transaction, same lock and timeout; the heal commits or rolls
 *   back with the caller's work.
 * - SQLite: a transaction (or the caller's, through a savepoint), except the table rebuild, which
 *   needs foreign keys off and so runs outside any transaction on the pinned writer: refused
 *   inside a caller's transaction.
 *
 * Heals are bounded: at most `maxHealsPerMinute` (default 60); beyond, errors propagate unhealed.
 */
import { rm } from 'node:fs/promises';
import { exponentialBackoff } from '../../../actors/backoff.js';
import type { Registry } from 'prom-client';
import type { Counter } from 'prom-client';
import { prom } from '../../../telemetry/lazy-modules.js';
import type { DataContext } from '../../context.js';
import type { Database, Queryable, Transaction } from '../../database.js';
import { DbError, InvalidDataConfig } from '../../errors.js';
import { HealFailed } from '../errors.js';
import { silentLogger, type Logger } from '../../../telemetry/index.js';
import type { Backend } from '../../values.js';
import { HEAL_LOCK_CLASS } from '../migrations/ledger.js';
import type { AnyModel, HealContext, ModelMeta, OrmHealer } from '../model.js';
import { introspect } from '../schema/introspect.js';
import { metaOf } from '../schema/diff.js';
import { classify, triggerCode, type HealPlan, type HealPlanKind } from './classify.js';
import { HealJournal, healId, type HealRecord } from './journal.js';
import { alterTypesSql, checkWidening, DEFAULT_TEXT_THRESHOLD, resolveHeal, type HealAction } from './resolve.js';
import { rebuildTable } from './sqlite-rebuild.js';

/** Between attempts at a heal's lock: 50 ms doubling, at most 5 s. */
const HEAL_LOCK_BACKOFF = { baseMs: 50, capMs: 5_000 } as const;

export const HEALER_DEFAULTS = {
  journalDir: 'migrations/auto',
  lockTimeoutMs: 5_000,
  lockRetries: 3,
  maxHealsPerMinute: 60,
  textThreshold: DEFAULT_TEXT_THRESHOLD,
} as const;
export const HEALER_LIMITS = {
  lockTimeoutMs: [1, 60_000],
  lockRetries: [0, 10],
  maxHealsPerMinute: [1, 10_000],
  /** Postgres's own varchar ceiling. */
  textThreshold: [1, 10_485_760],
} as const;

export interface HealerOptions {
  /** The database heals run on (SQLite rebuilds pin its writer through `session`). */
  readonly db: Database;
  /** Every model, so a heal can find the owner of a table an error names. */
  readonly models?: readonly (AnyModel | ModelMeta)[];
  /** Where journal files go (default `migrations/auto`). */
  readonly journalDir?: string;
  /** Postgres `lock_timeout` for heal DDL (default 5,000 ms, 1..60,000). */
  readonly lockTimeoutMs?: number;
  /** Attempts after a lock timeout (default 3, 0..10), with doubling pauses from 50 ms. */
  readonly lockRetries?: number;
  /** Heals per rolling minute (default 60, 1..10,000); beyond, errors propagate unhealed. */
  readonly maxHealsPerMinute?: number;
  /** varchar lengths past this widen to text (default 65,535, 1..10,485,760). */
  readonly textThreshold?: number;
  readonly logger?: Logger;
  /** prom-client registry for `molo_orm_heals_total{plan,result}`. */
  readonly metrics?: Registry;
}

const healCounters = new WeakMap<Registry, Counter<'plan' | 'result'>>();

function counterFor(registry: Registry | undefined): Counter<'plan' | 'result'> | undefined {
  if (registry === undefined) return undefined;
  let counter = healCounters.get(registry);
  if (counter === undefined) {
    counter = new prom.Counter({ name: 'molo_orm_heals_total', help: 'Schema heals by plan and result (applied, skipped, fatal, failed).', labelNames: ['plan', 'result'], registers: [registry] });
    healCounters.set(registry, counter);
  }
  return counter;
}

function bounded(option: keyof typeof HEALER_LIMITS, value: number | undefined): number {
  const v = value ?? HEALER_DEFAULTS[option];
  const [min, max] = HEALER_LIMITS[option];
  if (!Number.isInteger(v) || v < min || v > max) throw new InvalidDataConfig(`healer.${option}`, `must be an integer in ${min}..${max}, got ${String(value)}`);
  return v;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One heal's identity across its attempts (a lock timeout retried keeps the same id and file). */
interface Attempt {
  at?: Date;
  id?: string;
  /** The journal file written, removed again if the heal ends up not applied. */
  file?: string;
}

export class Healer implements OrmHealer<HealRecord> {
  readonly backend: Backend;
  readonly journal: HealJournal;
  readonly #db: Database;
  readonly #models = new Map<string, ModelMeta>();
  readonly #log: Logger;
  readonly #lockTimeoutMs: number;
  readonly #lockRetries: number;
  readonly #maxPerMinute: number;
  readonly #textThreshold: number;
  readonly #counter: Counter<'plan' | 'result'> | undefined;
  readonly #recent: number[] = [];

  constructor(options: HealerOptions) {
    this.#db = options.db;
    this.backend = options.db.backend;
    for (const model of options.models ?? []) {
      const meta = metaOf(model);
      this.#models.set(meta.table, meta);
    }
    this.journal = new HealJournal(options.journalDir ?? HEALER_DEFAULTS.journalDir);
    this.#log = options.logger ?? silentLogger;
    this.#lockTimeoutMs = bounded('lockTimeoutMs', options.lockTimeoutMs);
    this.#lockRetries = bounded('lockRetries', options.lockRetries);
    this.#maxPerMinute = bounded('maxHealsPerMinute', options.maxHealsPerMinute);
    this.#textThreshold = bounded('textThreshold', options.textThreshold);
    this.#counter = counterFor(options.metrics);
  }

  /** The OrmHealer hook: a record when something was healed (retry the statement), undefined when the error is not healable. */
  async heal(error: unknown, context: HealContext): Promise<HealRecord | undefined> {
    const plan = classify(context.backend, error);
    if (plan.kind === 'fatal') return undefined;
    if (!this.#admit()) {
      this.#log.warn({ event: 'orm.heal.throttled', plan: plan.kind, table: context.model.table, max: this.#maxPerMinute }, `heal skipped: more than ${this.#maxPerMinute} heals in a minute (healer.maxHealsPerMinute)`);
      this.#count(plan.kind, 'throttled');
      return undefined;
    }
    const code = triggerCode(error) ?? 'unknown';
    const reason = error instanceof Error ? error.message : String(error);
    const attempt: Attempt = {};
    try {
      const rec = await this.#healWith(plan, context, code, reason, attempt);
      if (rec === undefined) this.#count(plan.kind, 'fatal');
      return rec;
    } catch (failure) {
      // Rolled back: the file must not claim a heal the database does not have.
      if (attempt.file !== undefined) await rm(attempt.file, { force: true }).catch(() => undefined);
      this.#count(plan.kind, 'failed');
      const wrapped =
        failure instanceof DbError && failure.constructor !== DbError
          ? failure
          : new HealFailed(`${plan.kind} on ${context.model.table}: ${failure instanceof Error ? failure.message : String(failure)}`, error, {
              cause: failure,
              ...(failure instanceof DbError && failure.sqlstate !== undefined ? { sqlstate: failure.sqlstate } : {}),
              ...(failure instanceof DbError && failure.sqliteCode !== undefined ? { sqliteCode: failure.sqliteCode } : {}),
            });
      this.#log.error({ event: 'orm.heal.failed', plan: plan.kind, table: context.model.table, err: wrapped }, wrapped.message);
      throw wrapped;
    }
  }

  /**
   * Widens one column to `toType` by hand, journaled like a heal (Postgres). Refuses anything that
   * is not strictly wider with NarrowingRefused, before any statement changes the schema.
   */
  async widenColumn(table: string, column: string, toType: string, ctx?: DataContext): Promise<HealRecord> {
    const snapshot = await introspect(this.#db, [table], ctx);
    const actual = snapshot.tables.get(table)?.columns.find((c) => c.name === column);
    if (actual === undefined) throw new HealFailed(`no column ${table}.${column}`, undefined);
    checkWidening(this.backend, table, column, actual.rawType, toType);
    const columns = [{ column, from: actual.rawType, to: toType }];
    const kind = /int|serial/i.test(toType) ? 'widenInt' : 'widenVarchar';
    const action: HealAction = { kind, table, columns, statements: [alterTypesSql(table, columns)] };
    if (this.backend === 'sqlite') throw new HealFailed('SQLite column types are affinities: nothing to widen', undefined);
    const attempt: Attempt = {};
    try {
      return await this.#applyPostgres(this.#db, false, table, ctx, async (q) => {
        const again = (await introspect(q, [table], ctx)).tables.get(table)?.columns.find((c) => c.name === column);
        if (again === undefined) throw new HealFailed(`no column ${table}.${column}`, undefined);
        checkWidening(this.backend, table, column, again.rawType, toType);
        return this.#journalAndRun(q, action, 'manual', `widen ${table}.${column} from ${again.rawType} to ${toType} (requested)`, kind, attempt);
      });
    } catch (error) {
      if (attempt.file !== undefined) await rm(attempt.file, { force: true }).catch(() => undefined);
      throw error;
    }
  }

  #admit(): boolean {
    const now = Date.now();
    while (this.#recent.length > 0 && this.#recent[0]! <= now - 60_000) this.#recent.shift();
    if (this.#recent.length >= this.#maxPerMinute) return false;
    this.#recent.push(now);
    return true;
  }

  #count(plan: HealPlanKind, result: string): void {
    this.#counter?.inc({ plan, result });
  }

  async #healWith(plan: HealPlan, context: HealContext, code: string, reason: string, attempt: Attempt): Promise<HealRecord | undefined> {
    const tableHint = 'table' in plan && plan.table !== undefined ? plan.table : context.model.table;
    const resolve = async (q: Queryable): Promise<HealAction | undefined> => {
      const result = resolveHeal({
        backend: this.backend,
        plan,
        model: context.model,
        models: this.#models,
        snapshot: await introspect(q, [...new Set([context.model.table, tableHint])]),
        inTransaction: context.inTransaction,
        textThreshold: this.#textThreshold,
      });
      if (result.kind === 'fatal') {
        this.#log.warn({ event: 'orm.heal.fatal', plan: plan.kind, table: tableHint, code, why: result.reason }, `not healed: ${result.reason}`);
        return undefined;
      }
      return result;
    };

    if (this.backend === 'postgres') {
      return this.#applyPostgres(context.db, context.inTransaction, tableHint, undefined, async (q) => {
        const action = await resolve(q);
        return action === undefined ? undefined : this.#journalAndRun(q, action, code, reason, plan.kind, attempt);
      });
    }

    // SQLite: a rebuild cannot run inside the caller's transaction.
    const action = await resolve(context.db);
    if (action === undefined) return undefined;
    const needsRebuild = action.kind === 'dropNotNull' || (action.kind === 'addColumn' && action.rebuildColumns.length > 0);
    if (needsRebuild) {
      if (context.inTransaction) {
        this.#log.warn({ event: 'orm.heal.fatal', plan: plan.kind, table: action.table, code }, 'not healed: the SQLite table rebuild runs with foreign keys off, outside any transaction; retry the work outside the transaction');
        return undefined;
      }
      return this.#rebuild(action, code, reason, plan.kind, attempt);
    }
    // Resolved again inside the write transaction: another statement may have healed it meanwhile.
    const run = async (q: Queryable): Promise<HealRecord | undefined> => {
      const again = await resolve(q);
      return again === undefined ? undefined : this.#journalAndRun(q, again, code, reason, plan.kind, attempt);
    };
    if (context.inTransaction) return isTransaction(context.db) ? context.db.transaction(run) : run(context.db);
    return this.#db.transaction(run);
  }

  /** Journal (file, then row), then the DDL, all through `q`. */
  async #journalAndRun(q: Queryable, action: HealAction, code: string, reason: string, plan: HealPlanKind, attempt: Attempt): Promise<HealRecord> {
    const at = (attempt.at ??= new Date());
    const id = (attempt.id ??= healId(action.table, plan, at));
    if (action.kind === 'none') {
      this.#count(plan, 'skipped');
      this.#log.info({ event: 'orm.heal.skipped', plan, table: action.table, why: action.why }, `heal not needed: ${action.why}`);
      return { id, backend: this.backend, table: action.table, plan, sql: [], reason: `${reason} (${action.why})`, triggerCode: code, at, checksum: '', applied: false };
    }
    const rec = this.journal.record({ id, backend: this.backend, table: action.table, plan: action.kind === 'createTable' ? 'createTable' : plan, sql: action.statements, reason: `${reason}; ${describe(action)}`, triggerCode: code, at });
    attempt.file = rec.file;
    await this.journal.writeFile(rec);
    await this.journal.writeRow(q, rec);
    for (const sql of action.statements) await q.query(sql);
    this.#applied(rec);
    return rec;
  }

  async #rebuild(action: HealAction, code: string, reason: string, plan: HealPlanKind, attempt: Attempt): Promise<HealRecord> {
    const at = (attempt.at ??= new Date());
    const id = (attempt.id ??= healId(action.table, plan, at));
    let rec: HealRecord | undefined;
    const edit =
      action.kind === 'dropNotNull'
        ? { dropNotNull: [{ column: action.column, ...(action.defaultSql === undefined ? {} : { defaultSql: action.defaultSql }) }] }
        : { addColumns: action.kind === 'addColumn' ? action.rebuildColumns : [], after: action.kind === 'addColumn' ? action.statements : [] };
    await rebuildTable(this.#db, action.table, {
      ...edit,
      before: async (tx, statements) => {
        rec = this.journal.record({ id, backend: this.backend, table: action.table, plan, sql: statements, reason: `${reason}; ${describe(action)} (table rebuild)`, triggerCode: code, at });
        attempt.file = rec.file;
        await this.journal.writeFile(rec);
        await this.journal.writeRow(tx, rec);
      },
    });
    this.#applied(rec!);
    return rec!;
  }

  #applied(rec: HealRecord): void {
    this.#count(rec.plan, 'applied');
    this.#log.warn({ event: 'orm.heal.applied', id: rec.id, table: rec.table, plan: rec.plan, code: rec.triggerCode, sql: rec.sql, file: rec.file }, `schema healed: ${rec.plan} on ${rec.table} (${rec.file})`);
  }

  /**
   * Runs `fn` under the heal advisory lock for `table` with `lock_timeout` set, in a transaction of
   * its own or a savepoint of the caller's; retried after a lock timeout.
   */
  async #applyPostgres<T>(q: Queryable, inTransaction: boolean, table: string, ctx: DataContext | undefined, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const locked = async (tx: Queryable): Promise<T> => {
      await tx.query(`SELECT pg_advisory_xact_lock(${HEAL_LOCK_CLASS}, hashtext($1))`, [table], ctx);
      const previous = (await tx.query<{ value: string }>(`SELECT current_setting('lock_timeout') AS value`, undefined, ctx)).rows[0]?.value ?? '0';
      await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [`${this.#lockTimeoutMs}ms`], ctx);
      const value = await fn(tx);
      // SET LOCAL would last to the end of the caller's transaction: put it back.
      await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [previous], ctx);
      return value;
    };
    for (let attempt = 0; ; attempt++) {
      try {
        if (inTransaction) {
          if (!isTransaction(q)) throw new HealFailed('inside a transaction, the heal needs the Transaction to open a savepoint', undefined);
          return await q.transaction(locked, ctx === undefined ? {} : { ctx });
        }
        return await this.#db.transaction(locked, ctx === undefined ? {} : { ctx });
      } catch (error) {
        if (!(error instanceof DbError) || error.sqlstate !== '55P03' || attempt >= this.#lockRetries) throw error;
        this.#log.warn({ event: 'orm.heal.lock_timeout', table, attempt: attempt + 1, lockTimeoutMs: this.#lockTimeoutMs }, `heal of ${table} timed out waiting for its lock; retrying`);
        await sleep(exponentialBackoff(HEAL_LOCK_BACKOFF, attempt));
      }
    }
  }
}

function isTransaction(q: Queryable): q is Transaction {
  return typeof (q as Partial<Transaction>).transaction === 'function' && typeof (q as Partial<Transaction>).depth === 'number';
}

function describe(action: HealAction): string {
  switch (action.kind) {
    case 'createTable':
      return `create table ${action.table}`;
    case 'addColumn':
      return `add column(s) ${action.columns.join(', ')} to ${action.table}`;
    case 'widenVarchar':
    case 'widenInt':
      return `widen ${action.columns.map((c) => `${action.table}.${c.column} ${c.from} -> ${c.to}`).join(', ')}`;
    case 'dropNotNull':
      return `drop NOT NULL of ${action.table}.${action.column}${action.defaultSql === undefined ? '' : ` (default ${action.defaultSql})`}`;
    case 'none':
      return action.why;
  }
}
