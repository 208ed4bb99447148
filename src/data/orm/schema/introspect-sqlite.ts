/**
 * SQLite introspection through the table-valued pragmas joined against sqlite_master
 * (`pragma_table_info`, `pragma_index_list`, `pragma_index_info`): three queries whatever the
 * number of tables. The CREATE TABLE text is kept too: the table-rebuild heal edits it.
 */
import type { DataContext } from '../../context.js';
import type { Queryable } from '../../database.js';
import { normalizeType } from './normalize.js';
import { byTable, uniqueSets, type ColumnSchema, type IndexSchema, type SchemaSnapshot, type TableSchema } from './snapshot.js';

// sqlite_% tables are SQLite's own (sqlite_sequence, sqlite_stat1).
const TABLES = `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`;

const COLUMNS = `SELECT m.name AS table_name, p.cid AS cid, p.name AS name, p.type AS type, p."notnull" AS not_null,
  p.dflt_value AS default_expr, p.pk AS pk
FROM sqlite_master m JOIN pragma_table_info(m.name) p
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
ORDER BY m.name, p.cid`;

const INDEXES = `SELECT m.name AS table_name, l.name AS name, l."unique" AS is_unique, l.origin AS origin, l.partial AS partial,
  i.seqno AS seqno, i.cid AS cid, i.name AS column_name
FROM sqlite_master m JOIN pragma_index_list(m.name) l JOIN pragma_index_info(l.name) i
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
ORDER BY m.name, l.name, i.seqno`;

type ColumnRow = {
  table_name: string;
  name: string;
  type: string;
  not_null: number | bigint;
  default_expr: string | null;
  pk: number | bigint;
};

type IndexRow = {
  table_name: string;
  name: string;
  is_unique: number | bigint;
  origin: string;
  partial: number | bigint;
  cid: number | bigint;
  column_name: string | null;
};

export async function introspectSqlite(db: Queryable, tables?: readonly string[], ctx?: DataContext): Promise<SchemaSnapshot> {
  const wanted = tables === undefined ? undefined : new Set(tables);
  const [tableRows, columnRows, indexRows] = await Promise.all([
    db.query<{ name: string; sql: string }>(TABLES, [], ctx),
    db.query<ColumnRow>(COLUMNS, [], ctx),
    db.query<IndexRow>(INDEXES, [], ctx),
  ]);
  const columns = byTable(columnRows.rows);
  const indexes = new Map<string, Map<string, { row: IndexRow; columns: string[]; expression: boolean }>>();
  const indexNames = new Set<string>();
  for (const row of indexRows.rows) {
    indexNames.add(row.name);
    let byName = indexes.get(row.table_name);
    if (byName === undefined) indexes.set(row.table_name, (byName = new Map()));
    let entry = byName.get(row.name);
    if (entry === undefined) byName.set(row.name, (entry = { row, columns: [], expression: false }));
    // cid -2: an expression; -1: the rowid.
    if (row.column_name === null) entry.expression = true;
    else entry.columns.push(row.column_name);
  }
  const snapshot = new Map<string, TableSchema>();
  for (const { name, sql } of tableRows.rows) {
    if (wanted !== undefined && !wanted.has(name)) continue;
    const rows = columns.get(name) ?? [];
    const pkColumns = rows.filter((row) => Number(row.pk) > 0).sort((a, b) => Number(a.pk) - Number(b.pk));
    const primaryKey = pkColumns.map((row) => row.name);
    // Only `INTEGER PRIMARY KEY` (that exact type, alone in the key) aliases the rowid.
    const rowidAlias = pkColumns.length === 1 && pkColumns[0]!.type.toUpperCase() === 'INTEGER' ? pkColumns[0]!.name : undefined;
    const cols: ColumnSchema[] = rows.map((row) => ({
      name: row.name,
      rawType: row.type,
      type: normalizeType('sqlite', row.type),
      // SQLite lets a non-rowid primary key column hold NULL unless it says NOT NULL: reported as is.
      nullable: Number(row.not_null) === 0 && row.name !== rowidAlias,
      default: row.default_expr,
      primaryKeyPosition: Number(row.pk),
      autoIncrement: row.name === rowidAlias,
    }));
    const tableIndexes: IndexSchema[] = [...(indexes.get(name)?.values() ?? [])].map(({ row, columns: indexColumns, expression }) => ({
      name: row.name,
      columns: indexColumns,
      unique: Number(row.is_unique) === 1,
      primary: row.origin === 'pk',
      partial: Number(row.partial) === 1,
      expression,
      constraint: row.origin === 'pk' || row.origin === 'u',
    }));
    // A rowid alias has no index of its own; the key is still unique.
    const uniques = uniqueSets(tableIndexes);
    if (rowidAlias !== undefined) uniques.push([rowidAlias]);
    snapshot.set(name, { name, columns: cols, indexes: tableIndexes, primaryKey, uniques, createSql: sql });
  }
  return { backend: 'sqlite', tables: snapshot, indexNames };
}
