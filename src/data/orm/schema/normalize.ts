/**
 * Column types in one normalized spelling, so that a harmless difference never looks like drift:
 * case and whitespace (`timestamp (3)` / `TIMESTAMP(3)`), aliases (`int4` / `integer`,
 * `character varying(20)` / `varchar(20)`, `timestamp(3) with time zone` / `timestamptz(3)`), and
 * default precisions (`timestamptz(6)` / `timestamptz`). On SQLite only the affinity decides how a
 * value is stored, so two declared types compare equal when their affinities are.
 *
 * `relateTypes` says whether the type a database has is the same as, wider or narrower than the
 * one a model wants, for the widen-only rule: varchar lengths, smallint < integer < bigint,
 * real < double precision, timestamp precisions; anything else is incompatible.
 */
import type { Backend } from '../../values.js';

/** Lowercase, single spaces, no spaces inside or before parentheses, none after commas in them. */
function tidy(raw: string): string {
  return raw
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/\s*\(\s*/g, '(')
    .replace(/\s*\)/g, ')')
    .replace(/\s*,\s*/g, ',')
    .replace(/\s*\[\s*\]/g, '[]');
}

const PG_ALIASES: Record<string, string> = {
  int: 'integer',
  int4: 'integer',
  integer: 'integer',
  serial: 'integer',
  serial4: 'integer',
  int2: 'smallint',
  smallint: 'smallint',
  smallserial: 'smallint',
  serial2: 'smallint',
  int8: 'bigint',
  bigint: 'bigint',
  bigserial: 'bigint',
  serial8: 'bigint',
  float8: 'double precision',
  'double precision': 'double precision',
  float: 'double precision',
  float4: 'real',
  real: 'real',
  bool: 'boolean',
  boolean: 'boolean',
  'character varying': 'varchar',
  varchar: 'varchar',
  character: 'char(1)',
  char: 'char(1)',
  bpchar: 'bpchar',
  decimal: 'numeric',
  numeric: 'numeric',
  timestamptz: 'timestamptz',
  'timestamp with time zone': 'timestamptz',
  timestamp: 'timestamp',
  'timestamp without time zone': 'timestamp',
  timetz: 'timetz',
  'time with time zone': 'timetz',
  time: 'time',
  'time without time zone': 'time',
};

/** Types whose default precision (6) may be written or left out. */
const PRECISION_DEFAULT_6 = new Set(['timestamp', 'timestamptz', 'time', 'timetz']);

function normalizePostgres(raw: string): string {
  let type = tidy(raw);
  let array = '';
  while (type.endsWith('[]')) {
    array += '[]';
    type = type.slice(0, -2);
  }
  if (type.startsWith('_')) {
    // The catalog's name for an array type (`_int4`).
    array += '[]';
    type = type.slice(1);
  }
  // `timestamp(3) with time zone`: the precision sits in the middle; move it to the end.
  const inner = /^(timestamp|time)\((\d+)\) (with|without) time zone$/.exec(type);
  if (inner !== null) type = `${inner[1]} ${inner[3]} time zone(${inner[2]})`;
  const args = /^(.*?)(\([^)]*\))?$/.exec(type)!;
  let base = args[1]!.trim();
  let params = args[2] ?? '';
  if (base === 'float' && params !== '') {
    // float(p): real up to 24 bits of mantissa, double precision beyond.
    base = Number(params.slice(1, -1)) <= 24 ? 'real' : 'double precision';
    params = '';
  }
  const alias = PG_ALIASES[base];
  if (alias !== undefined) {
    if (alias === 'char(1)' && params !== '') base = 'char';
    else base = alias;
  }
  if (PRECISION_DEFAULT_6.has(base) && params === '(6)') params = '';
  return `${base}${params}${array}`;
}

/** SQLite's type affinity of a declared type (https://www.sqlite.org/datatype3.html, 3.1). */
export function sqliteAffinity(declared: string): 'INTEGER' | 'TEXT' | 'BLOB' | 'REAL' | 'NUMERIC' {
  const type = declared.toUpperCase();
  if (type.includes('INT')) return 'INTEGER';
  if (type.includes('CHAR') || type.includes('CLOB') || type.includes('TEXT')) return 'TEXT';
  if (type.trim() === '' || type.includes('BLOB')) return 'BLOB';
  if (type.includes('REAL') || type.includes('FLOA') || type.includes('DOUB')) return 'REAL';
  return 'NUMERIC';
}

/** The normalized spelling of a column type on `backend`. SQLite keeps the declared name (tidied, uppercase). */
export function normalizeType(backend: Backend, raw: string): string {
  return backend === 'postgres' ? normalizePostgres(raw) : tidy(raw).toUpperCase();
}

/** Whether two types are the same once normalized (on SQLite: the same affinity). */
export function sameType(backend: Backend, a: string, b: string): boolean {
  if (backend === 'sqlite') return sqliteAffinity(a) === sqliteAffinity(b);
  return normalizePostgres(a) === normalizePostgres(b);
}

export type TypeRelation = 'same' | 'wider' | 'narrower' | 'incompatible';

const INT_RANK: Record<string, number> = { smallint: 1, integer: 2, bigint: 3 };
const FLOAT_RANK: Record<string, number> = { real: 1, 'double precision': 2 };
/** varchar without a length and text both hold any string. */
const UNBOUNDED_TEXT = new Set(['text', 'varchar']);

function rank(a: number, b: number): TypeRelation {
  return a === b ? 'same' : a > b ? 'wider' : 'narrower';
}

/**
 * How the type a database has (`actual`) relates to the one a model wants (`wanted`): `wider`
 * means every value of `wanted` fits in `actual`. SQLite stores any value in any column, so there
 * the answer is `same` or, for another affinity, `incompatible`.
 */
export function relateTypes(backend: Backend, actual: string, wanted: string): TypeRelation {
  if (backend === 'sqlite') return sqliteAffinity(actual) === sqliteAffinity(wanted) ? 'same' : 'incompatible';
  const a = normalizePostgres(actual);
  const w = normalizePostgres(wanted);
  if (a === w) return 'same';
  if (INT_RANK[a] !== undefined && INT_RANK[w] !== undefined) return rank(INT_RANK[a]!, INT_RANK[w]!);
  if (FLOAT_RANK[a] !== undefined && FLOAT_RANK[w] !== undefined) return rank(FLOAT_RANK[a]!, FLOAT_RANK[w]!);
  const aLen = varcharLength(a);
  const wLen = varcharLength(w);
  if (aLen !== undefined && wLen !== undefined) return rank(aLen, wLen);
  const aTime = timePrecision(a);
  const wTime = timePrecision(w);
  if (aTime !== undefined && wTime !== undefined && aTime.base === wTime.base) return rank(aTime.precision, wTime.precision);
  return 'incompatible';
}

/** A varchar's length; Infinity for text and unbounded varchar; undefined for other types. */
export function varcharLength(normalized: string): number | undefined {
  if (UNBOUNDED_TEXT.has(normalized)) return Number.POSITIVE_INFINITY;
  const match = /^varchar\((\d+)\)$/.exec(normalized);
  return match === null ? undefined : Number(match[1]);
}

function timePrecision(normalized: string): { base: string; precision: number } | undefined {
  const match = /^(timestamptz|timestamp|timetz|time)(?:\((\d)\))?$/.exec(normalized);
  if (match === null) return undefined;
  return { base: match[1]!, precision: match[2] === undefined ? 6 : Number(match[2]) };
}
