/**
 * The little the SQLite handle reads from SQL text: its leading keyword. The main thread routes a
 * statement it has not seen yet by it (reads to readers); the worker names the result's command by
 * it. Whether a statement really only reads is decided by SQLite (better-sqlite3's `readonly`), and
 * a reader refuses a statement that writes, so a wrong guess costs one extra hop, never a write on a
 * read-only handle.
 */

const LEADING_KEYWORD = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*([A-Za-z]+)/;
const DML_AFTER_CTE = /\b(INSERT|REPLACE|UPDATE|DELETE)\b/i;

/** The statement's first keyword, upper-cased; '' when there is none. */
export function leadingKeyword(sql: string): string {
  const match = LEADING_KEYWORD.exec(sql);
  return match === null ? '' : match[1]!.toUpperCase();
}

/** Keywords of statements that only read, when SQLite agrees (a reader checks). */
const READ_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES', 'EXPLAIN']);

/** A first guess: does this statement only read? */
export function looksReadOnly(sql: string): boolean {
  return READ_KEYWORDS.has(leadingKeyword(sql));
}

/** The command tag's verb for a result: SELECT, INSERT, UPDATE, DELETE, CREATE, PRAGMA, ... */
export function commandOf(sql: string, readonly: boolean): string {
  const keyword = leadingKeyword(sql);
  if (keyword === 'WITH') {
    if (readonly) return 'SELECT';
    const dml = DML_AFTER_CTE.exec(sql);
    return dml === null ? 'WITH' : dml[1]!.toUpperCase();
  }
  if (keyword === 'VALUES') return 'SELECT';
  return keyword;
}

/** Commands whose `changes()` count is theirs (SQLite leaves it stale after DDL and others). */
export function countsChanges(command: string): boolean {
  return command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'REPLACE';
}

/** Commands after which `last_insert_rowid()` is theirs. */
export function insertsRows(command: string): boolean {
  return command === 'INSERT' || command === 'REPLACE';
}
