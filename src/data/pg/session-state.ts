/**
 * Statements that leave state in the server session (04 BP-2): under transaction pooling the next
 * caller of the same connection would inherit it (a probe's `SET search_path` was read by the next
 * caller's statement). The shared `db.query()` and transactions refuse them; `db.session(fn)` runs
 * them on a pinned connection that is reset (`DISCARD ALL`) before it goes back to the pool.
 *
 * Cheap on purpose, since every shared statement passes here: one anchored regex for the leading
 * keyword, one search for the two session-level functions, and a tokenizer pass (the read-only
 * check's) only for texts holding a `;`, to look at each statement of a multi-statement string.
 *
 * Session state: `SET` (not `SET LOCAL`, `SET TRANSACTION`, `SET CONSTRAINTS`, which end with the
 * transaction), `RESET`, `LISTEN`, `UNLISTEN`, `PREPARE`, `DEALLOCATE`, `DISCARD`, `LOAD`,
 * `DECLARE ... WITH HOLD`, `CREATE TEMP|TEMPORARY ...`, session-level advisory locks
 * (`pg_advisory_lock`, `pg_try_advisory_lock`, their `_shared` forms; the `_xact_` ones are fine) and
 * `set_config(name, value, false)` (`true`, local to the transaction, is fine).
 */
import { TOKEN } from './classify.js';

/** Leading whitespace and comments, then the first word and what follows it. */
const LEADING = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*([A-Za-z]+)/;
const ALWAYS = new Set(['reset', 'listen', 'unlisten', 'prepare', 'deallocate', 'discard', 'load']);
/** After `SET`: the forms that end with the transaction. */
const SET_SCOPED = /^\s+(?:local|transaction|constraints)\b/i;
const CREATE_TEMP = /^\s+(?:(?:global|local)\s+)?(?:temp|temporary)\b/i;
const WITH_HOLD = /\bwith\s+hold\b/i;
const SESSION_FUNCTION = /\b(pg_(?:try_)?advisory_lock(?:_shared)?|set_config)\s*\(/i;
const LOCAL_SET_CONFIG = /\bset_config\s*\([^;]*?,\s*true\s*\)/i;

/** The session-state statement kind of `sql` (`SET`, `LISTEN`, `pg_advisory_lock`, ...), or undefined. */
export function sessionStateOf(sql: string): string | undefined {
  const kind = statementKind(sql);
  if (kind !== undefined) return kind;
  const call = SESSION_FUNCTION.exec(sql);
  if (call !== null) {
    const name = call[1]!.toLowerCase();
    if (name !== 'set_config' || !LOCAL_SET_CONFIG.test(sql)) return `${name}()`;
  }
  if (sql.indexOf(';') === -1) return undefined;
  return laterStatementKind(sql);
}

function statementKind(sql: string): string | undefined {
  const match = LEADING.exec(sql);
  if (match === null) return undefined;
  const word = match[1]!.toLowerCase();
  if (ALWAYS.has(word)) return word.toUpperCase();
  if (word === 'set') return SET_SCOPED.test(sql.slice(match[0].length)) ? undefined : 'SET';
  if (word === 'create') return CREATE_TEMP.test(sql.slice(match[0].length)) ? 'CREATE TEMP' : undefined;
  if (word === 'declare') return WITH_HOLD.test(sql.slice(match[0].length)) ? 'DECLARE ... WITH HOLD' : undefined;
  return undefined;
}

/** Each statement after a `;` outside strings, quoted names and comments. */
function laterStatementKind(sql: string): string | undefined {
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(sql); match !== null; match = TOKEN.exec(sql)) {
    if (match[8] !== ';') continue;
    const kind = statementKind(sql.slice(TOKEN.lastIndex));
    if (kind !== undefined) return kind;
  }
  return undefined;
}
