/**
 * SQLite's documented procedure for schema changes ALTER TABLE cannot make
 * (https://www.sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes"):
 *
 *   PRAGMA foreign_keys=OFF (outside any transaction: inside one it is a no-op);
 *   BEGIN; remember the table's indexes, triggers and the views that name it;
 *   CREATE TABLE new_X (the revised definition); INSERT INTO new_X SELECT ... FROM X;
 *   DROP TABLE X; ALTER TABLE new_X RENAME TO X; recreate indexes, triggers, views;
 *   PRAGMA foreign_key_check; COMMIT; PRAGMA foreign_keys=ON.
 *
 * It runs on the writer connection pinned for the whole procedure (`db.session`), so no other
 * statement interleaves and the PRAGMA applies to the connection the transaction uses. The
 * AUTOINCREMENT high-water mark is carried over, so ids of deleted rows are never reused.
 */
import type { DataContext } from '../../context.js';
import type { Database, Queryable } from '../../database.js';
import { quoteIdent } from '../dialect.js';
import { columnNameOf, parseCreateTable, rewriteCreateTable, type CreateTableEdit } from './sqlite-create-sql.js';

export interface RebuildOptions extends CreateTableEdit {
  /** Runs inside the transaction before anything changes, with the statements about to run (the journal write). */
  readonly before?: (tx: Queryable, statements: readonly string[]) => Promise<void>;
  /** Statements run after the table and its indexes are back (new indexes). */
  readonly after?: readonly string[];
  readonly ctx?: DataContext;
}

export interface RebuildResult {
  /** Every statement of the procedure that changed the schema or data, in order (for the journal). */
  readonly statements: readonly string[];
  readonly rowsCopied: number;
}

/** The statements a rebuild of `table` (whose CREATE TABLE is `createSql`) runs between BEGIN and COMMIT. */
export function rebuildStatements(
  table: string,
  createSql: string,
  edit: CreateTableEdit,
  related: readonly { readonly type: string; readonly name: string; readonly sql: string }[],
): { statements: string[]; drop: string[]; recreate: string[] } {
  const temp = `molo_rebuild_${table}`.slice(0, 63);
  const copied = parseCreateTable(createSql).columns.map((definition) => quoteIdent(columnNameOf(definition)));
  const views = related.filter((entry) => entry.type === 'view');
  const recreate = related.filter((entry) => entry.type === 'index' || entry.type === 'trigger').map((entry) => entry.sql);
  return {
    drop: views.map((view) => `DROP VIEW ${quoteIdent(view.name)}`),
    statements: [
      rewriteCreateTable(createSql, quoteIdent(temp), edit),
      `INSERT INTO ${quoteIdent(temp)} (${copied.join(', ')}) SELECT ${copied.join(', ')} FROM ${quoteIdent(table)}`,
      `DROP TABLE ${quoteIdent(table)}`,
      `ALTER TABLE ${quoteIdent(temp)} RENAME TO ${quoteIdent(table)}`,
    ],
    recreate: [...recreate, ...views.map((view) => view.sql)],
  };
}

/** Rebuilds `table` with `options`' edit applied, following the 12 steps; rolls back entirely on any failure. */
export async function rebuildTable(db: Database, table: string, options: RebuildOptions): Promise<RebuildResult> {
  const ctx = options.ctx;
  return db.session(async (s) => {
    const fkRows = await s.query<{ foreign_keys: number | bigint }>('PRAGMA foreign_keys', undefined, ctx);
    const foreignKeys = Number(fkRows.rows[0]?.foreign_keys ?? 0) === 1;
    if (foreignKeys) await s.query('PRAGMA foreign_keys=OFF', undefined, ctx);
    try {
      await s.query('BEGIN IMMEDIATE', undefined, ctx);
      try {
        const result = await rebuildInside(s, table, options, foreignKeys);
        await s.query('COMMIT', undefined, ctx);
        return result;
      } catch (error) {
        await s.query('ROLLBACK', undefined, ctx).catch(() => undefined);
        throw error;
      }
    } finally {
      if (foreignKeys) await s.query('PRAGMA foreign_keys=ON', undefined, ctx);
    }
  }, ctx);
}

async function rebuildInside(s: Queryable, table: string, options: RebuildOptions, foreignKeys: boolean): Promise<RebuildResult> {
  const ctx = options.ctx;
  const master = await s.query<{ type: string; name: string; tbl_name: string; sql: string | null }>(
    `SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND (tbl_name = $1 OR type = 'view')`,
    [table],
    ctx,
  );
  const createSql = master.rows.find((row) => row.type === 'table' && row.name === table)?.sql;
  if (createSql === undefined || createSql === null) throw new Error(`no table ${table} to rebuild`);
  const nameLower = table.toLowerCase();
  const related = master.rows
    .filter((row) => row.type === 'index' || row.type === 'trigger' || (row.type === 'view' && row.sql!.toLowerCase().includes(nameLower)))
    .map((row) => ({ type: row.type, name: row.name, sql: row.sql! }));
  const sequence = await s.query<{ seq: number | bigint }>(`SELECT seq FROM sqlite_sequence WHERE name = $1`, [table], ctx).catch(() => ({ rows: [] as { seq: number | bigint }[] }));
  const plan = rebuildStatements(table, createSql, options, related);

  if (options.before !== undefined) await options.before(s, [...plan.drop, ...plan.statements, ...plan.recreate, ...(options.after ?? [])]);
  const ran: string[] = [];
  const run = async (sql: string): Promise<number> => {
    ran.push(sql);
    return (await s.query(sql, undefined, ctx)).affected;
  };
  for (const sql of plan.drop) await run(sql);
  let rowsCopied = 0;
  for (const [i, sql] of plan.statements.entries()) {
    const affected = await run(sql);
    if (i === 1) rowsCopied = affected;
  }
  for (const sql of plan.recreate) await run(sql);
  const seq = sequence.rows[0]?.seq;
  if (seq !== undefined) await s.query(`UPDATE sqlite_sequence SET seq = max(seq, $1) WHERE name = $2`, [seq, table], ctx);
  for (const sql of options.after ?? []) await run(sql);
  if (foreignKeys) {
    const violations = await s.query('PRAGMA foreign_key_check', undefined, ctx);
    if (violations.rows.length > 0) throw new Error(`foreign key check failed after rebuilding ${table}: ${JSON.stringify(violations.rows.slice(0, 5))}`);
  }
  return { statements: ran, rowsCopied };
}
