/**
 * Whether a statement only reads, decided conservatively from its text: when the connection is
 * lost with it in flight, a read fails with retryable ConnectionLost, anything else with
 * OutcomeUnknown. A false "write" costs a caller a check; a false "read" could repeat a write, so
 * anything in doubt is a write.
 */

/** Leading whitespace and comments. */
const LEADING_NOISE = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;
const READ_START = /^(?:select|show|values|explain|table|with)\b/i;
/**
 * Words that make a read statement write: data-modifying CTEs and EXPLAIN ANALYZE of one, SELECT
 * INTO (creates a table), row locks taken for a later write, sequence and advisory-lock functions.
 */
const WRITE_WORDS =
  /\b(?:insert|update|delete|merge|into|truncate|copy|call|do|lock|for\s+(?:no\s+key\s+)?update|for\s+(?:key\s+)?share|nextval|setval|pg_advisory\w*|pg_try_advisory\w*|pg_terminate_backend|pg_cancel_backend|set_config|txid_current|pg_current_xact_id|lo_\w+|dblink\w*)\b/i;

/** A read, and only a read, judged from the text alone (the transaction state is the caller's part). */
export function isReadOnlySql(sql: string): boolean {
  const body = sql.replace(LEADING_NOISE, '');
  if (!READ_START.test(body)) return false;
  // Several statements: only the first was looked at.
  const semicolon = body.indexOf(';');
  if (semicolon >= 0 && body.slice(semicolon + 1).trim().length > 0) return false;
  return !WRITE_WORDS.test(body);
}
