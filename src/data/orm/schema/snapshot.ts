/**
 * What introspection reads from a live database, the same shape for both backends: tables, their
 * columns (type as declared and normalized, nullability, default), indexes, unique column sets and
 * primary key.
 */
import type { Backend } from '../../values.js';

export interface ColumnSchema {
  readonly name: string;
  /** The type as the server reports it (`character varying(20)`, `INTEGER`). */
  readonly rawType: string;
  /** The type in normalized form (see normalizeType): what comparisons use. */
  readonly type: string;
  readonly nullable: boolean;
  /** The default expression as the server reports it, or null. */
  readonly default: string | null;
  /** Position in the primary key, 1-based; 0 when not part of it. */
  readonly primaryKeyPosition: number;
  /** Postgres identity / SQLite INTEGER PRIMARY KEY (rowid alias). */
  readonly autoIncrement: boolean;
}

export interface IndexSchema {
  readonly name: string;
  /** Column names in index order; empty when the index is on expressions only. */
  readonly columns: readonly string[];
  readonly unique: boolean;
  /** Backs the primary key. */
  readonly primary: boolean;
  /** Has a WHERE clause (a partial index enforces nothing table-wide). */
  readonly partial: boolean;
  /** Some key is an expression, not a column. */
  readonly expression: boolean;
  /** Backs a UNIQUE/PRIMARY KEY constraint (as opposed to CREATE INDEX). */
  readonly constraint: boolean;
}

export interface TableSchema {
  readonly name: string;
  readonly columns: readonly ColumnSchema[];
  readonly indexes: readonly IndexSchema[];
  readonly primaryKey: readonly string[];
  /** Column sets that are enforced unique table-wide (unique constraints, unique indexes, the primary key). */
  readonly uniques: readonly (readonly string[])[];
  /** SQLite: the CREATE TABLE text from sqlite_master (what the table-rebuild edits). Postgres: undefined. */
  readonly createSql?: string;
}

export interface SchemaSnapshot {
  readonly backend: Backend;
  readonly tables: ReadonlyMap<string, TableSchema>;
  /** Every index name in the schema (Postgres index names are schema-wide). */
  readonly indexNames: ReadonlySet<string>;
}

export function columnOfTable(table: TableSchema, name: string): ColumnSchema | undefined {
  return table.columns.find((column) => column.name === name);
}

/** Catalog rows grouped by their table, in row order (both introspections read one query for all tables). */
export function byTable<R extends { readonly table_name: string }>(rows: readonly R[]): Map<string, R[]> {
  const grouped = new Map<string, R[]>();
  for (const row of rows) {
    const list = grouped.get(row.table_name);
    if (list === undefined) grouped.set(row.table_name, [row]);
    else list.push(row);
  }
  return grouped;
}

/** Unique column sets from indexes: non-partial, non-expression unique indexes. */
export function uniqueSets(indexes: readonly IndexSchema[]): string[][] {
  return indexes.filter((index) => index.unique && !index.partial && !index.expression && index.columns.length > 0).map((index) => [...index.columns]);
}
