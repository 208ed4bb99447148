/**
 * Whether a statement only reads, decided conservatively from its text: when the connection is
 * lost with it in flight, a read fails with retryable ConnectionLost, anything else with
 * OutcomeUnknown. A false "write" costs a caller a check; a false "read" could repeat a write, so
 * anything in doubt is a write.
 *
 * Text cannot see inside a function (`SELECT w($1)` where `w` inserts) or an operator, so a call is
 * a read only when it names a function of a fixed list known to have no side effects; any other
 * call, any quoted or schema-qualified call and any operator outside the built-in ones makes the
 * statement a write. A caller who knows better says so with `{ readOnly: true }` (or `false`).
 * Views are beyond any text check: a view over a writing function needs `{ readOnly: false }`.
 */

/** Leading whitespace and comments. */
const LEADING_NOISE = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;
const READ_START = /^(?:select|show|values|explain|table|with)\b/i;
/**
 * Words that make a read statement write: data-modifying CTEs and EXPLAIN ANALYZE of one, SELECT
 * INTO (creates a table), row locks taken for a later write.
 */
const WRITE_WORDS = /\b(?:insert|update|delete|merge|into|truncate|copy|call|do|lock|for\s+(?:no\s+key\s+)?update|for\s+(?:key\s+)?share)\b/i;

/** Keywords that a parenthesis may follow without a function being called. */
const PAREN_KEYWORDS = new Set(
  'select from where and or not in exists any all some array row values as on join using lateral with recursive union intersect except over filter within group by partition order having limit offset case when then else end is distinct between like ilike similar escape cast interval returning materialized'.split(' '),
);

/**
 * Functions known to change nothing (Postgres built-ins: aggregates, window, string, math, time,
 * JSON, arrays, type names used as casts, and a few informational ones). Repeating a call to any of
 * these cannot write twice. Deliberately short: what is not here is treated as a write.
 */
const PURE_FUNCTIONS = new Set(
  (
    'count sum avg min max bool_and bool_or every array_agg string_agg json_agg jsonb_agg json_object_agg jsonb_object_agg ' +
    'row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value percentile_cont percentile_disc mode ' +
    'coalesce nullif greatest least ' +
    'lower upper length char_length character_length octet_length bit_length substr substring trim btrim ltrim rtrim replace translate concat concat_ws ' +
    'left right position strpos split_part repeat reverse lpad rpad initcap starts_with format md5 sha256 encode decode to_hex ascii chr ' +
    'regexp_replace regexp_match regexp_matches regexp_split_to_array regexp_split_to_table quote_ident quote_literal quote_nullable ' +
    'abs ceil ceiling floor round trunc mod power pow sqrt cbrt exp ln log log10 sign div pi degrees radians sin cos tan width_bucket random ' +
    'now clock_timestamp statement_timestamp transaction_timestamp date_trunc date_part extract to_char to_timestamp to_date to_number age ' +
    'make_date make_time make_timestamp make_timestamptz make_interval date_bin justify_days justify_hours justify_interval isfinite timezone ' +
    'to_json to_jsonb row_to_json array_to_json json_build_object jsonb_build_object json_build_array jsonb_build_array json_object jsonb_object ' +
    'json_array_length jsonb_array_length json_typeof jsonb_typeof json_extract_path jsonb_extract_path json_extract_path_text jsonb_extract_path_text ' +
    'jsonb_set jsonb_insert jsonb_strip_nulls jsonb_pretty json_each jsonb_each json_each_text jsonb_each_text json_array_elements jsonb_array_elements ' +
    'json_array_elements_text jsonb_array_elements_text json_object_keys jsonb_object_keys jsonb_path_query jsonb_path_exists jsonb_path_match ' +
    'array_length array_position array_positions array_remove array_replace array_append array_prepend array_cat array_to_string string_to_array ' +
    'array_dims array_lower array_upper array_ndims cardinality unnest generate_series generate_subscripts ' +
    'gen_random_uuid uuid_generate_v4 pg_sleep version current_setting current_database current_schema pg_backend_pid pg_typeof ' +
    'pg_column_size pg_relation_size pg_table_size pg_total_relation_size pg_database_size pg_size_pretty to_regclass has_table_privilege ' +
    'numeric decimal varchar char character bit varbit timestamp timestamptz time timetz float int int2 int4 int8 bool text'
  ).split(' '),
);

/** Operators of Postgres itself (comparison, arithmetic, text, JSON, arrays, ranges, casts). */
const BUILTIN_OPERATORS = new Set(
  '= <> != < > <= >= + - * / % ^ || :: -> ->> #> #>> @> <@ ? ?| ?& && ~ ~* !~ !~* ~~ ~~* !~~ !~~* @@ || # << >> & | -|- &< &> @-@ @'.split(' '),
);

/**
 * One token at a time: space, comment, E-string (backslash escapes), standard string, dollar-quoted
 * string, quoted name, word, number, operator, any other character. Where this reads differently
 * from the server (nested comments, standard_conforming_strings off) it sees more text as code, not
 * less, so a call is never hidden.
 */
export const TOKEN =
  /(\s+|--[^\n]*|\/\*[\s\S]*?\*\/)|([eE]'(?:[^'\\]|''|\\[\s\S])*'|'(?:[^']|'')*'|\$([A-Za-z_]\w*)?\$[\s\S]*?\$\3\$)|("(?:[^"]|"")*")|([A-Za-z_][\w$]*)|(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+)|([-+*/<>=~!@#%^&|`?:]+)|([\s\S])/gy;

/** A read, and only a read, judged from the text alone (the transaction state is the caller's part). */
export function isReadOnlySql(sql: string): boolean {
  const body = sql.replace(LEADING_NOISE, '');
  if (!READ_START.test(body)) return false;
  let code = '';
  /** The previous meaningful token: a word (lowercased), `'` for a string, `"` for a quoted name, or the symbol. */
  let previous = '';
  let beforePrevious = '';
  let ended = false;
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(body); match !== null; match = TOKEN.exec(body)) {
    const [, noise, literal, , quoted, word, number, operator, other] = match;
    if (noise !== undefined) continue;
    if (ended) return false; // text after a `;`: several statements, only the first was looked at
    let token: string;
    if (literal !== undefined) token = "'";
    else if (quoted !== undefined) token = '"';
    else if (word !== undefined) token = word.toLowerCase();
    else if (number !== undefined) token = '0';
    else if (operator !== undefined) {
      if (!isBuiltinOperator(operator)) return false;
      token = operator;
    } else if (other === ';') {
      ended = true;
      continue;
    } else token = other ?? '';
    if (token === '(' && !callIsPure(previous, beforePrevious)) return false;
    if (word !== undefined || operator !== undefined) code += ` ${token}`;
    beforePrevious = previous;
    previous = token;
  }
  return !WRITE_WORDS.test(code);
}

/** A built-in operator, possibly followed by a unary minus or plus (`x=-1`). */
function isBuiltinOperator(operator: string): boolean {
  if (BUILTIN_OPERATORS.has(operator)) return true;
  const last = operator[operator.length - 1];
  return (last === '-' || last === '+') && BUILTIN_OPERATORS.has(operator.slice(0, -1));
}

/** Whether `previous (` is no call, or a call of a known side-effect-free function. */
function callIsPure(previous: string, beforePrevious: string): boolean {
  if (previous === '"') return false; // "w"(...): a quoted name could be any function
  if (!/^[a-z_]/.test(previous)) return true; // `((`, `= (`, `, (`: grouping, not a call
  if (beforePrevious === '.') return false; // schema.f(...)
  return PAREN_KEYWORDS.has(previous) || PURE_FUNCTIONS.has(previous);
}
