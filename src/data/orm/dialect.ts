/**
 * What differs between Postgres and SQLite SQL, in one place: identifier quoting (validated),
 * column types (from the type-mapping table), DDL for tables, columns and indexes, default
 * literals, and the few query forms that differ (LIKE, IN lists). Both backends take `$1, $2, ...`
 * placeholders, and both support `RETURNING` and `ON CONFLICT ... DO UPDATE`.
 */
import { EncodeFailed } from '../errors.js';
import { InvalidIdentifier } from './errors.js';
import type { Backend, Value } from '../values.js';
import type { DefaultSpec } from './fields.js';
import { constraintName, identifierProblem, type ColumnMeta, type IndexMeta, type ModelMeta } from './model.js';
import { columnType } from './types.js';

export interface DdlOptions {
  /** `IF NOT EXISTS`: for idempotent boots. */
  readonly ifNotExists?: boolean;
}

export interface Dialect {
  readonly backend: Backend;
  /** `"name"`, after checking it: non-empty, no NUL, at most 63 bytes (InvalidIdentifier otherwise). */
  quoteIdent(name: string): string;
  /** The n-th (1-based) placeholder. */
  placeholder(n: number): string;
  /** The column's type, from TYPE_MAPPING. */
  columnType(col: ColumnMeta): string;
  /** `"name" type [identity] [NOT NULL] [DEFAULT ...]`, as CREATE TABLE and ADD COLUMN use it. */
  columnDefinition(col: ColumnMeta): string;
  /** The DEFAULT expression of a column, or undefined when it has none. */
  defaultSql(col: ColumnMeta): string | undefined;
  createTableSql(meta: ModelMeta, options?: DdlOptions): string;
  addColumnSql(meta: ModelMeta, col: ColumnMeta): string;
  createIndexSql(meta: ModelMeta, index: IndexMeta, options?: DdlOptions): string;
  /** CREATE TABLE followed by its indexes: what a fresh database needs for the model. */
  createTableStatements(meta: ModelMeta, options?: DdlOptions): string[];
  /**
   * A case-sensitive LIKE (`%`, `_`, backslash escapes) on both backends: Postgres's LIKE as is;
   * SQLite's LIKE ignores ASCII case, so there the pattern is translated to GLOB (see likeToGlob).
   */
  like(column: string, placeholder: string): string;
  /** The bound value for `like`'s placeholder. */
  likeParam(pattern: string): string;
  /**
   * `column IN <the values of one array parameter>`: `= ANY($n)` on Postgres, `IN (SELECT value
   * FROM json_each($n))` on SQLite. One parameter whatever the number of values, and one SQL text,
   * so the statement caches keep hitting.
   */
  inArray(column: string, placeholder: string): string;
  /** The parameter for `inArray`, or undefined when the values cannot travel as one (bytes on SQLite). */
  arrayParam(values: readonly Value[]): Value | undefined;
}

const identCache = new Map<string, string>();
const IDENT_CACHE_MAX = 4096;

/** Double-quotes an identifier after validating it; results are cached (identifiers repeat). */
export function quoteIdent(name: string): string {
  const cached = identCache.get(name);
  if (cached !== undefined) return cached;
  const problem = identifierProblem(name);
  if (problem !== undefined) throw new InvalidIdentifier(String(name), problem);
  const quoted = `"${name.replace(/"/g, '""')}"`;
  if (identCache.size < IDENT_CACHE_MAX) identCache.set(name, quoted);
  return quoted;
}

function stringLiteral(value: string): string {
  if (value.includes('\0')) throw new EncodeFailed('a default value contains NUL');
  return `'${value.replace(/'/g, "''")}'`;
}

/** SQLite's expression for a random v4 uuid, lowercase, with the variant nibble in 8..b. */
const SQLITE_UUID =
  "(lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || " +
  "substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))))";
const SQLITE_NOW = "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))";

/** A default value as a SQL literal (DDL cannot bind parameters), per kind and backend. */
function literal(backend: Backend, col: ColumnMeta, value: unknown): string {
  if (value === null) return 'NULL';
  const bad = (): never => {
    throw new EncodeFailed(`default of column ${col.name}: ${typeof value} is not a ${col.kind}`);
  };
  switch (col.kind) {
    case 'int32':
    case 'double':
      if (typeof value !== 'number' || !Number.isFinite(value)) bad();
      if (col.kind === 'int32' && !Number.isInteger(value)) bad();
      return String(value);
    case 'int64':
      if (typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value))) return String(value);
      return bad();
    case 'string':
    case 'text':
      return typeof value === 'string' ? stringLiteral(value) : bad();
    case 'uuid':
      return typeof value === 'string' ? stringLiteral(value.toLowerCase()) : bad();
    case 'bool':
      if (typeof value !== 'boolean') bad();
      return backend === 'postgres' ? (value ? 'TRUE' : 'FALSE') : value ? '1' : '0';
    case 'time':
      if (!(value instanceof Date) || Number.isNaN(value.getTime())) bad();
      return stringLiteral((value as Date).toISOString());
    case 'json': {
      const json = JSON.stringify(value);
      if (json === undefined) bad();
      return stringLiteral(json!);
    }
    case 'bytes':
      if (!(value instanceof Uint8Array)) bad();
      return backend === 'postgres' ? `'\\x${Buffer.from(value as Uint8Array).toString('hex')}'` : `X'${Buffer.from(value as Uint8Array).toString('hex')}'`;
  }
}

function defaultExpression(backend: Backend, col: ColumnMeta, spec: DefaultSpec): string {
  switch (spec.kind) {
    case 'value':
      return literal(backend, col, spec.value);
    case 'now':
      return backend === 'postgres' ? 'now()' : SQLITE_NOW;
    case 'uuid':
      return backend === 'postgres' ? 'gen_random_uuid()' : SQLITE_UUID;
    case 'sql':
      // Author-written constant SQL; parenthesized so SQLite accepts any expression.
      return `(${spec.sql})`;
  }
}

/**
 * A LIKE pattern (`%` any run, `_` one character, `\` escapes the next) as a GLOB pattern, which
 * SQLite matches case-sensitively like Postgres's LIKE. GLOB's own specials are bracketed.
 */
export function likeToGlob(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      out += globLiteral(pattern[++i]!);
    } else if (c === '%') out += '*';
    else if (c === '_') out += '?';
    else out += globLiteral(c);
  }
  return out;
}

function globLiteral(c: string): string {
  return c === '*' || c === '?' || c === '[' ? `[${c}]` : c;
}

/** Values as a JSON array for json_each: integers exact (bigint digits), times as ISO text, booleans 1/0. */
function jsonArray(values: readonly Value[]): string | undefined {
  let out = '[';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    switch (typeof v) {
      case 'bigint':
        out += v.toString();
        break;
      case 'number':
        if (!Number.isFinite(v)) return undefined;
        out += String(v);
        break;
      case 'string':
        out += JSON.stringify(v);
        break;
      case 'boolean':
        out += v ? '1' : '0';
        break;
      case 'object':
        if (v === null) out += 'null';
        else if (v instanceof Date) out += JSON.stringify(v.toISOString());
        else return undefined;
        break;
      default:
        return undefined;
    }
  }
  return `${out}]`;
}

class SqlDialect implements Dialect {
  constructor(readonly backend: Backend) {}

  inArray(column: string, placeholder: string): string {
    return this.backend === 'postgres' ? `${column} = ANY(${placeholder})` : `${column} IN (SELECT value FROM json_each(${placeholder}))`;
  }

  arrayParam(values: readonly Value[]): Value | undefined {
    return this.backend === 'postgres' ? values : jsonArray(values);
  }

  quoteIdent(name: string): string {
    return quoteIdent(name);
  }

  placeholder(n: number): string {
    return `$${n}`;
  }

  columnType(col: ColumnMeta): string {
    return columnType(this.backend, col);
  }

  defaultSql(col: ColumnMeta): string | undefined {
    return col.default === undefined ? undefined : defaultExpression(this.backend, col, col.default);
  }

  columnDefinition(col: ColumnMeta): string {
    let sql = `${quoteIdent(col.name)} ${this.columnType(col)}`;
    if (col.autoIncrement) {
      // SQLite: only an inline `INTEGER PRIMARY KEY` aliases the rowid; AUTOINCREMENT never reuses ids.
      sql += this.backend === 'postgres' ? ' GENERATED BY DEFAULT AS IDENTITY' : ' PRIMARY KEY AUTOINCREMENT';
    }
    if (!col.nullable) sql += ' NOT NULL';
    const def = this.defaultSql(col);
    if (def !== undefined) sql += ` DEFAULT ${def}`;
    return sql;
  }

  createTableSql(meta: ModelMeta, options: DdlOptions = {}): string {
    const parts = meta.columns.map((col) => this.columnDefinition(col));
    const inlinePk = this.backend === 'sqlite' && meta.columns.some((col) => col.autoIncrement);
    if (!inlinePk) parts.push(`CONSTRAINT ${quoteIdent(constraintName(meta.table, [], 'pkey'))} PRIMARY KEY (${this.list(meta.primaryKey)})`);
    for (const unique of meta.uniques) parts.push(`CONSTRAINT ${quoteIdent(constraintName(meta.table, unique, 'key'))} UNIQUE (${this.list(unique)})`);
    for (const check of meta.checks) parts.push(`CHECK (${check})`);
    return `CREATE TABLE ${options.ifNotExists === true ? 'IF NOT EXISTS ' : ''}${quoteIdent(meta.table)} (${parts.join(', ')})`;
  }

  addColumnSql(meta: ModelMeta, col: ColumnMeta): string {
    return `ALTER TABLE ${quoteIdent(meta.table)} ADD COLUMN ${this.columnDefinition(col)}`;
  }

  createIndexSql(meta: ModelMeta, index: IndexMeta, options: DdlOptions = {}): string {
    return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${options.ifNotExists === true ? 'IF NOT EXISTS ' : ''}${quoteIdent(index.name)} ON ${quoteIdent(meta.table)} (${this.list(index.columns)})`;
  }

  createTableStatements(meta: ModelMeta, options: DdlOptions = {}): string[] {
    return [this.createTableSql(meta, options), ...meta.indexes.map((index) => this.createIndexSql(meta, index, options))];
  }

  like(column: string, placeholder: string): string {
    return this.backend === 'postgres' ? `${column} LIKE ${placeholder}` : `${column} GLOB ${placeholder}`;
  }

  likeParam(pattern: string): string {
    return this.backend === 'postgres' ? pattern : likeToGlob(pattern);
  }

  private list(columns: readonly string[]): string {
    return columns.map((c) => quoteIdent(c)).join(', ');
  }
}

export const POSTGRES: Dialect = new SqlDialect('postgres');
export const SQLITE: Dialect = new SqlDialect('sqlite');

export function dialectFor(backend: Backend): Dialect {
  return backend === 'postgres' ? POSTGRES : SQLITE;
}
