/**
 * Postgres introspection from pg_catalog (the information_schema views hide what a role does not
 * own and cost several joins more): tables of the current schema, their columns with
 * `format_type` types, nullability, defaults and identity, and their indexes with the constraint
 * each backs. Three queries whatever the number of tables.
 */
import type { DataContext } from '../../context.js';
import type { Queryable } from '../../database.js';
import { normalizeType } from './normalize.js';
import { byTable, uniqueSets, type ColumnSchema, type IndexSchema, type SchemaSnapshot, type TableSchema } from './snapshot.js';

const TABLES = `SELECT c.relname AS name
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
  AND ($1::text[] IS NULL OR c.relname = ANY($1::text[]))`;

const COLUMNS = `SELECT c.relname AS table_name, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
  a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS default_expr, a.attidentity AS identity
FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
  AND ($1::text[] IS NULL OR c.relname = ANY($1::text[]))
ORDER BY c.relname, a.attnum`;

const INDEXES = `SELECT t.relname AS table_name, i.relname AS name, ix.indisunique AS is_unique, ix.indisprimary AS is_primary,
  ix.indpred IS NOT NULL AS partial, ix.indexprs IS NOT NULL AS expression,
  array_to_string(ARRAY(
    SELECT a.attname::text FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
    ORDER BY k.ord), chr(1)) AS columns,
  EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = ix.indexrelid AND con.contype IN ('p', 'u')) AS is_constraint
FROM pg_index ix
  JOIN pg_class i ON i.oid = ix.indexrelid
  JOIN pg_class t ON t.oid = ix.indrelid
  JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = current_schema()
ORDER BY t.relname, i.relname`;

type ColumnRow = {
  table_name: string;
  name: string;
  type: string;
  not_null: boolean;
  default_expr: string | null;
  identity: string;
};

type IndexRow = {
  table_name: string;
  name: string;
  is_unique: boolean;
  is_primary: boolean;
  partial: boolean;
  expression: boolean;
  columns: string;
  is_constraint: boolean;
};

export async function introspectPostgres(db: Queryable, tables?: readonly string[], ctx?: DataContext): Promise<SchemaSnapshot> {
  const filter = tables === undefined ? null : [...tables];
  const [tableRows, columnRows, indexRows] = await Promise.all([
    db.query<{ name: string }>(TABLES, [filter], ctx),
    db.query<ColumnRow>(COLUMNS, [filter], ctx),
    // Every index of the schema: index names are schema-wide, so a new one must avoid all of them.
    db.query<IndexRow>(INDEXES, [], ctx),
  ]);
  const columns = byTable(columnRows.rows);
  const indexes = new Map<string, IndexSchema[]>();
  const indexNames = new Set<string>();
  for (const row of indexRows.rows) {
    indexNames.add(row.name);
    let list = indexes.get(row.table_name);
    if (list === undefined) indexes.set(row.table_name, (list = []));
    list.push({
      name: row.name,
      columns: row.columns === '' ? [] : row.columns.split('\u0001'),
      unique: row.is_unique,
      primary: row.is_primary,
      partial: row.partial,
      expression: row.expression,
      constraint: row.is_constraint,
    });
  }
  const snapshot = new Map<string, TableSchema>();
  for (const { name } of tableRows.rows) {
    const tableIndexes = indexes.get(name) ?? [];
    const primaryKey = tableIndexes.find((index) => index.primary)?.columns ?? [];
    const cols: ColumnSchema[] = (columns.get(name) ?? []).map((row) => ({
      name: row.name,
      rawType: row.type,
      type: normalizeType('postgres', row.type),
      nullable: !row.not_null,
      default: row.default_expr,
      primaryKeyPosition: primaryKey.indexOf(row.name) + 1,
      autoIncrement: row.identity === 'a' || row.identity === 'd' || (row.default_expr?.startsWith('nextval(') ?? false),
    }));
    snapshot.set(name, { name, columns: cols, indexes: tableIndexes, primaryKey, uniques: uniqueSets(tableIndexes) });
  }
  return { backend: 'postgres', tables: snapshot, indexNames };
}
