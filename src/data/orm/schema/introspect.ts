/** Introspection on either backend: the snapshot of the tables asked for (default: all of them). */
import type { DataContext } from '../../context.js';
import type { Queryable } from '../../database.js';
import { introspectPostgres } from './introspect-pg.js';
import { introspectSqlite } from './introspect-sqlite.js';
import type { SchemaSnapshot, TableSchema } from './snapshot.js';

export function introspect(db: Queryable, tables?: readonly string[], ctx?: DataContext): Promise<SchemaSnapshot> {
  return db.backend === 'postgres' ? introspectPostgres(db, tables, ctx) : introspectSqlite(db, tables, ctx);
}

/** One table's schema, or undefined when it does not exist. */
export async function introspectTable(db: Queryable, table: string, ctx?: DataContext): Promise<TableSchema | undefined> {
  return (await introspect(db, [table], ctx)).tables.get(table);
}
