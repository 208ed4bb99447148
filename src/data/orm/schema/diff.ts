/**
 * A model against the table a database has: the additive changes that would bring the table in
 * line (create it, add columns, create indexes and unique indexes) and the drift that sync leaves
 * alone (a type narrower or wider than the model's, nullability, extra columns, another primary
 * key). Types are compared normalized, so a harmless spelling difference is neither.
 *
 * Additive means safe on a table with rows: a NOT NULL column without a default is added NOT NULL
 * only if the table turns out empty (Postgres) and nullable otherwise; SQLite's ADD COLUMN takes
 * no NOT NULL without default and no non-constant default, so there such a column goes through the
 * table rebuild, or is added nullable when even that cannot fill existing rows.
 */
import type { Dialect } from '../dialect.js';
import { constraintName, type AnyModel, type ColumnMeta, type IndexMeta, type ModelMeta } from '../model.js';
import { relateTypes, type TypeRelation } from './normalize.js';
import { columnOfTable, type SchemaSnapshot, type TableSchema } from './snapshot.js';

export type SchemaChange =
  | { readonly kind: 'createTable'; readonly table: string; readonly sql: readonly string[] }
  | {
      readonly kind: 'addColumn';
      readonly table: string;
      readonly column: string;
      /** The ADD COLUMN statement (SQLite rebuilds: the column definition the rebuilt table gets). */
      readonly sql: string;
      /** Postgres, NOT NULL without default: the statement to use instead when the table has rows. */
      readonly sqlIfRows?: string;
      /** SQLite: the column needs the table rebuild (a non-constant default ADD COLUMN refuses). */
      readonly rebuild: boolean;
      /** What was given up against the model to stay additive (reported as drift too). */
      readonly relaxed: readonly ('notNull' | 'default' | 'autoIncrement')[];
    }
  | { readonly kind: 'createIndex'; readonly table: string; readonly index: string; readonly unique: boolean; readonly sql: string };

export type DriftKind =
  | 'type-narrower'
  | 'type-wider'
  | 'type-incompatible'
  | 'nullable-in-db'
  | 'not-null-in-db'
  | 'extra-column'
  | 'primary-key'
  | 'index-name-taken'
  | 'relaxed';

export interface Drift {
  readonly table: string;
  readonly column?: string;
  readonly kind: DriftKind;
  readonly actual?: string;
  readonly wanted?: string;
}

export interface TablePlan {
  readonly table: string;
  readonly exists: boolean;
  readonly changes: readonly SchemaChange[];
  readonly drift: readonly Drift[];
}

/** A model's normalized description, from the model or the description itself. */
export function metaOf(model: AnyModel | ModelMeta): ModelMeta {
  return 'meta' in model ? model.meta : model;
}

const TYPE_DRIFT: Record<Exclude<TypeRelation, 'same'>, DriftKind> = { wider: 'type-wider', narrower: 'type-narrower', incompatible: 'type-incompatible' };

/** The plan for one model against `snapshot`. Pure: no statement runs. */
export function diffModel(meta: ModelMeta, snapshot: SchemaSnapshot, dialect: Dialect): TablePlan {
  const table = snapshot.tables.get(meta.table);
  if (table === undefined) {
    return { table: meta.table, exists: false, changes: [{ kind: 'createTable', table: meta.table, sql: dialect.createTableStatements(meta) }], drift: [] };
  }
  const changes: SchemaChange[] = [];
  const drift: Drift[] = [];
  const backend = dialect.backend;

  for (const col of meta.columns) {
    const actual = columnOfTable(table, col.name);
    if (actual === undefined) {
      const change = addColumnChange(meta, col, dialect);
      changes.push(change);
      for (const what of change.relaxed) drift.push({ table: meta.table, column: col.name, kind: 'relaxed', wanted: what });
      continue;
    }
    const wanted = dialect.columnType(col);
    const relation = relateTypes(backend, actual.rawType, wanted);
    if (relation !== 'same') drift.push({ table: meta.table, column: col.name, kind: TYPE_DRIFT[relation], actual: actual.rawType, wanted });
    if (actual.nullable && !col.nullable && !col.primaryKey) drift.push({ table: meta.table, column: col.name, kind: 'nullable-in-db' });
    if (!actual.nullable && col.nullable) drift.push({ table: meta.table, column: col.name, kind: 'not-null-in-db' });
  }
  for (const actual of table.columns) {
    if (!meta.columns.some((col) => col.name === actual.name)) drift.push({ table: meta.table, column: actual.name, kind: 'extra-column', actual: actual.rawType });
  }
  if (!sameSet(table.primaryKey, meta.primaryKey)) drift.push({ table: meta.table, kind: 'primary-key', actual: table.primaryKey.join(', '), wanted: meta.primaryKey.join(', ') });

  const taken = new Set(snapshot.indexNames);
  const wantIndex = (index: IndexMeta): void => {
    if (taken.has(index.name)) {
      drift.push({ table: meta.table, kind: 'index-name-taken', wanted: `${index.name} (${index.columns.join(', ')})` });
      return;
    }
    taken.add(index.name);
    changes.push({ kind: 'createIndex', table: meta.table, index: index.name, unique: index.unique, sql: dialect.createIndexSql(meta, index) });
  };
  for (const unique of meta.uniques) {
    if (hasUnique(table, unique)) continue;
    wantIndex({ name: constraintName(meta.table, unique, 'key'), columns: unique, unique: true });
  }
  for (const index of meta.indexes) {
    if (hasIndex(table, index)) continue;
    wantIndex(index);
  }
  return { table: meta.table, exists: true, changes, drift };
}

function addColumnChange(meta: ModelMeta, col: ColumnMeta, dialect: Dialect): Extract<SchemaChange, { kind: 'addColumn' }> {
  const relaxed: ('notNull' | 'default' | 'autoIncrement')[] = [];
  // An added column is never part of the table's existing primary key.
  let adjusted: ColumnMeta = { ...col, primaryKey: false };
  if (dialect.backend === 'sqlite') {
    if (adjusted.autoIncrement) {
      adjusted = { ...adjusted, autoIncrement: false };
      relaxed.push('autoIncrement');
    }
    const constantDefault = adjusted.default === undefined || adjusted.default.kind === 'value';
    if (!constantDefault) {
      // ADD COLUMN refuses a non-constant default; the rebuild's INSERT ... SELECT evaluates it per row.
      return { kind: 'addColumn', table: meta.table, column: col.name, sql: dialect.columnDefinition(adjusted), rebuild: true, relaxed };
    }
    if (!adjusted.nullable && adjusted.default === undefined) {
      adjusted = { ...adjusted, nullable: true };
      relaxed.push('notNull');
    }
    return { kind: 'addColumn', table: meta.table, column: col.name, sql: dialect.addColumnSql(meta, adjusted), rebuild: false, relaxed };
  }
  const sql = dialect.addColumnSql(meta, adjusted);
  if (!adjusted.nullable && adjusted.default === undefined && !adjusted.autoIncrement) {
    return { kind: 'addColumn', table: meta.table, column: col.name, sql, sqlIfRows: dialect.addColumnSql(meta, { ...adjusted, nullable: true }), rebuild: false, relaxed };
  }
  return { kind: 'addColumn', table: meta.table, column: col.name, sql, rebuild: false, relaxed };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name) => b.includes(name));
}

function hasUnique(table: TableSchema, columns: readonly string[]): boolean {
  return table.uniques.some((unique) => sameSet(unique, columns));
}

/** A model index is there when an index on the same columns in the same order exists (unique if it must be). */
function hasIndex(table: TableSchema, index: IndexMeta): boolean {
  return table.indexes.some(
    (actual) =>
      !actual.partial &&
      !actual.expression &&
      (actual.unique || !index.unique) &&
      actual.columns.length === index.columns.length &&
      actual.columns.every((name, i) => name === index.columns[i]),
  );
}

/** Whether a plan issues any statement. */
export function hasChanges(plan: TablePlan): boolean {
  return plan.changes.length > 0;
}

