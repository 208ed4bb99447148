/**
 * Statements that leave state on a SQLite connection (04 BP-2, applied to SQLite): the writer is
 * shared by every caller of the file, so a `PRAGMA foreign_keys=OFF` or an `ATTACH` run through
 * `db.query()` (or inside a transaction) would stay for every later write. Refused there; allowed in
 * `db.session(fn)`, which pins the writer and restores it afterwards.
 *
 * Refused: a PRAGMA that sets (`PRAGMA name = value`, `PRAGMA name(value)`) unless it is one of the
 * pragmas that take an argument only to read or to run a one-off action (table_info, integrity_check,
 * wal_checkpoint, optimize, ...); `ATTACH`, `DETACH`; `CREATE TEMP|TEMPORARY ...`. A PRAGMA without an
 * argument only reads and is fine. better-sqlite3 runs one statement per text, so the first is all.
 */

const LEADING = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*([A-Za-z]+)/;
/** After PRAGMA: an optional schema, the name, and whether an argument follows. */
const PRAGMA_SETS = /^\s+(?:[A-Za-z_]\w*\s*\.\s*)?([A-Za-z_]\w*)\s*(=|\()/;
const CREATE_TEMP = /^\s+(?:temp|temporary)\b/i;
/** Pragmas whose argument names what to read or check, or a one-off action: no state stays. */
const ARGUMENT_READS = new Set(
  'table_info table_xinfo table_list index_info index_xinfo index_list foreign_key_list foreign_key_check integrity_check quick_check wal_checkpoint optimize incremental_vacuum'.split(' '),
);

/** The session-state statement kind of `sql` (`PRAGMA foreign_keys`, `ATTACH`, ...), or undefined. */
export function sqliteSessionStateOf(sql: string): string | undefined {
  // Most statements start with a letter other than these: one character decides.
  const first = sql.charCodeAt(0) | 0x20;
  if (first !== 0x70 /* p */ && first !== 0x61 /* a */ && first !== 0x64 /* d */ && first !== 0x63 /* c */ && first > 0x2f) return undefined;
  const match = LEADING.exec(sql);
  if (match === null) return undefined;
  const word = match[1]!.toLowerCase();
  if (word === 'attach' || word === 'detach') return word.toUpperCase();
  if (word === 'create') return CREATE_TEMP.test(sql.slice(match[0].length)) ? 'CREATE TEMP' : undefined;
  if (word !== 'pragma') return undefined;
  const pragma = PRAGMA_SETS.exec(sql.slice(match[0].length));
  if (pragma === null) return undefined;
  const name = pragma[1]!.toLowerCase();
  return ARGUMENT_READS.has(name) ? undefined : `PRAGMA ${name}`;
}
