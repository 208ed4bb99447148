/**
 * From a classified error to the DDL that heals it, against the models and the live schema: which
 * model's table, which columns, what width. Widen only: every type change goes through
 * `checkWidening`, which refuses anything that is not strictly wider (NarrowingRefused).
 *
 * - createTable: the model owning the missing table (the statement's, or the one the message names).
 * - addColumn: the model's columns the table lacks (the one the message names must be among them).
 * - widenVarchar(n): the table's varchar(n) columns, to max(n × 4, the model's length), text past
 *   `textThreshold`.
 * - widenInt: the table's integer/smallint columns narrower than the model's type, to that type
 *   (an int32 model column stays integer: widening it would change what the model reads).
 * - dropNotNull: a NOT NULL column the model leaves nullable or no longer has; the model's default
 *   is set with it (the backfill for rows that omit it). SQLite: through the table rebuild.
 */
import { NarrowingRefused } from '../errors.js';
import type { Backend } from '../../values.js';
import { dialectFor, quoteIdent } from '../dialect.js';
import type { ColumnMeta, ModelMeta } from '../model.js';
import { diffModel, type SchemaChange } from '../schema/diff.js';
import { normalizeType, relateTypes } from '../schema/normalize.js';
import { columnOfTable, type SchemaSnapshot } from '../schema/snapshot.js';
import type { Fatal, HealPlan } from './classify.js';

/** Varchar lengths past this become text (Postgres's own varchar ceiling is 10,485,760). */
export const DEFAULT_TEXT_THRESHOLD = 65_535;

export interface WidenedColumn {
  readonly column: string;
  readonly from: string;
  readonly to: string;
}

export type HealAction =
  | { readonly kind: 'createTable'; readonly table: string; readonly statements: readonly string[] }
  | { readonly kind: 'addColumn'; readonly table: string; readonly columns: readonly string[]; readonly statements: readonly string[]; readonly rebuildColumns: readonly string[] }
  | { readonly kind: 'widenVarchar' | 'widenInt'; readonly table: string; readonly columns: readonly WidenedColumn[]; readonly statements: readonly string[] }
  | { readonly kind: 'dropNotNull'; readonly table: string; readonly column: string; readonly defaultSql?: string; readonly statements: readonly string[] }
  /** The schema already has what the error said was missing (healed meanwhile, by another process). */
  | { readonly kind: 'none'; readonly table: string; readonly why: string };

export interface ResolveInput {
  readonly backend: Backend;
  readonly plan: HealPlan;
  /** The model of the failed statement. */
  readonly model: ModelMeta;
  /** Every model the healer knows, to find the owner of a table the message names. */
  readonly models: ReadonlyMap<string, ModelMeta>;
  readonly snapshot: SchemaSnapshot;
  /** SQLite inside a transaction: no rebuild possible, add columns as plain ADD COLUMN (relaxed). */
  readonly inTransaction: boolean;
  readonly textThreshold?: number;
}

function fatal(reason: string): Fatal {
  return { kind: 'fatal', reason };
}

/** Throws NarrowingRefused unless `to` is strictly wider than `from` on `backend`. */
export function checkWidening(backend: Backend, table: string, column: string, from: string, to: string): void {
  if (relateTypes(backend, to, from) !== 'wider') throw new NarrowingRefused(table, column, from, to);
}

/** `ALTER TABLE ... ALTER COLUMN ... TYPE ...` for each column, in one statement (one rewrite). */
export function alterTypesSql(table: string, columns: readonly WidenedColumn[]): string {
  return `ALTER TABLE ${quoteIdent(table)} ${columns.map((c) => `ALTER COLUMN ${quoteIdent(c.column)} TYPE ${c.to}`).join(', ')}`;
}

export function resolveHeal(input: ResolveInput): HealAction | Fatal {
  const { plan, backend, snapshot } = input;
  const dialect = dialectFor(backend);
  const modelFor = (table: string | undefined): ModelMeta | undefined =>
    table === undefined || table === input.model.table ? input.model : input.models.get(table);

  switch (plan.kind) {
    case 'createTable': {
      const meta = modelFor(plan.table);
      if (meta === undefined) return fatal(`no model owns table ${plan.table}`);
      if (snapshot.tables.has(meta.table)) return { kind: 'none', table: meta.table, why: `table ${meta.table} exists` };
      return { kind: 'createTable', table: meta.table, statements: dialect.createTableStatements(meta, { ifNotExists: true }) };
    }
    case 'addColumn': {
      const meta = modelFor(plan.table);
      if (meta === undefined) return fatal(`no model owns table ${plan.table}`);
      if (plan.column !== undefined && !meta.columns.some((c) => c.name === plan.column)) return fatal(`model ${meta.table} has no column ${plan.column}`);
      const table = snapshot.tables.get(meta.table);
      if (table === undefined) return { kind: 'createTable', table: meta.table, statements: dialect.createTableStatements(meta, { ifNotExists: true }) };
      const changes = diffModel(meta, snapshot, dialect).changes.filter((c): c is Extract<SchemaChange, { kind: 'addColumn' }> => c.kind === 'addColumn');
      if (changes.length === 0) return { kind: 'none', table: meta.table, why: `${meta.table} has every column of its model` };
      const statements: string[] = [];
      const rebuildColumns: string[] = [];
      for (const change of changes) {
        if (!change.rebuild) statements.push(change.sqlIfRows ?? change.sql);
        else if (input.inTransaction) statements.push(relaxedAddColumn(meta, change.column, backend));
        else rebuildColumns.push(change.sql);
      }
      return { kind: 'addColumn', table: meta.table, columns: changes.map((c) => c.column), statements, rebuildColumns };
    }
    case 'widenVarchar': {
      if (backend !== 'postgres') return fatal('SQLite does not enforce varchar lengths');
      const meta = input.model;
      const table = snapshot.tables.get(meta.table);
      if (table === undefined) return fatal(`table ${meta.table} does not exist`);
      const threshold = input.textThreshold ?? DEFAULT_TEXT_THRESHOLD;
      const columns: WidenedColumn[] = [];
      for (const actual of table.columns) {
        if (actual.type !== `varchar(${plan.length})`) continue;
        const model = meta.columns.find((c) => c.name === actual.name);
        const modelLength = model === undefined ? 0 : model.kind === 'string' ? (model.length ?? 0) : model.kind === 'text' ? Number.POSITIVE_INFINITY : 0;
        const length = Math.max(plan.length * 4, modelLength);
        const to = length > threshold ? 'text' : `varchar(${length})`;
        checkWidening(backend, meta.table, actual.name, actual.type, to);
        columns.push({ column: actual.name, from: actual.rawType, to });
      }
      if (columns.length === 0) return { kind: 'none', table: meta.table, why: `no varchar(${plan.length}) column in ${meta.table}` };
      return { kind: 'widenVarchar', table: meta.table, columns, statements: [alterTypesSql(meta.table, columns)] };
    }
    case 'widenInt': {
      if (backend !== 'postgres') return fatal('SQLite does not enforce integer ranges');
      const meta = input.model;
      const table = snapshot.tables.get(meta.table);
      if (table === undefined) return fatal(`table ${meta.table} does not exist`);
      const columns: WidenedColumn[] = [];
      for (const actual of table.columns) {
        if (actual.type !== plan.from) continue;
        const model = meta.columns.find((c) => c.name === actual.name);
        if (model === undefined) continue;
        const wanted = dialect.columnType(model);
        if (relateTypes(backend, actual.rawType, wanted) !== 'narrower') continue;
        checkWidening(backend, meta.table, actual.name, actual.type, wanted);
        columns.push({ column: actual.name, from: actual.rawType, to: normalizeType(backend, wanted) });
      }
      if (columns.length === 0) return fatal(`no ${plan.from} column of ${meta.table} is narrower than its model (an int32 field overflowing needs a model change)`);
      return { kind: 'widenInt', table: meta.table, columns, statements: [alterTypesSql(meta.table, columns)] };
    }
    case 'dropNotNull': {
      const meta = modelFor(plan.table);
      if (meta === undefined) return fatal(`no model owns table ${plan.table}`);
      if (plan.column === undefined) return fatal('the error does not name the column');
      const table = snapshot.tables.get(meta.table);
      const actual = table === undefined ? undefined : columnOfTable(table, plan.column);
      if (actual === undefined) return fatal(`no column ${meta.table}.${plan.column}`);
      if (actual.primaryKeyPosition > 0) return fatal(`${meta.table}.${plan.column} is part of the primary key`);
      const model = meta.columns.find((c) => c.name === plan.column);
      if (model !== undefined && !model.nullable) return fatal(`the model requires ${meta.table}.${plan.column} (NOT NULL): the statement is wrong, not the schema`);
      if (actual.nullable) return { kind: 'none', table: meta.table, why: `${meta.table}.${plan.column} is already nullable` };
      const defaultSql = model === undefined ? undefined : dialect.defaultSql(model);
      const q = quoteIdent;
      const statements =
        backend === 'postgres'
          ? [`ALTER TABLE ${q(meta.table)} ALTER COLUMN ${q(plan.column)} DROP NOT NULL${defaultSql !== undefined && actual.default === null ? `, ALTER COLUMN ${q(plan.column)} SET DEFAULT ${defaultSql}` : ''}`]
          : [];
      return { kind: 'dropNotNull', table: meta.table, column: plan.column, ...(defaultSql === undefined ? {} : { defaultSql }), statements };
    }
  }
}

/** A column added with nothing ADD COLUMN could refuse: nullable, no default (SQLite inside a transaction). */
function relaxedAddColumn(meta: ModelMeta, column: string, backend: Backend): string {
  const col = meta.columns.find((c) => c.name === column)!;
  const relaxed: ColumnMeta = { ...col, nullable: true, default: undefined, autoIncrement: false, primaryKey: false };
  return dialectFor(backend).addColumnSql(meta, relaxed);
}

