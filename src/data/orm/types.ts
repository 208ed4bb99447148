/**
 * THE type mapping: TypeScript ↔ Postgres ↔ SQLite, one table. The dialects take column types from
 * it, the ORM encodes parameters and decodes rows with it, and `docs/orm-types.md` is generated from
 * it (`npx tsx scripts/gen-orm-types.ts`; a test fails when the page differs).
 *
 * Rows must read identically on both backends, so each kind says how a value is bound and how the
 * raw column a driver returns becomes the TypeScript value: SQLite hands back numbers for small
 * integers, 0/1 for booleans and text for times and JSON; Postgres already decodes most of them.
 */
import { EncodeFailed } from '../errors.js';
import type { Backend, Value } from '../values.js';
import { FIELD_KINDS, type FieldKind } from './fields.js';
import type { ColumnMeta } from './model.js';

export interface TypeMapping {
  /** How a model declares it. */
  readonly builder: string;
  /** The TypeScript type of a value read from it. */
  readonly ts: string;
  readonly postgres: (col: ColumnMeta) => string;
  readonly sqlite: (col: ColumnMeta) => string;
  /** What to know (shown in the doc). */
  readonly notes: string;
  /** A TypeScript value as a bound parameter (null never reaches here); EncodeFailed when it is not one. */
  readonly encode: (value: unknown, column: string) => Value;
  /** A non-null raw column value from each backend → the TypeScript value; undefined when the driver's value is already right. */
  readonly decode: { readonly postgres?: (raw: unknown) => unknown; readonly sqlite?: (raw: unknown) => unknown };
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function refuse(column: string, what: string, value: unknown): never {
  const shown = typeof value === 'string' ? `a string of ${value.length} characters` : typeof value === 'object' ? (value === null ? 'null' : (value.constructor?.name ?? 'an object')) : `a ${typeof value}`;
  throw new EncodeFailed(`column ${column}: expected ${what}, got ${shown}`);
}

function text(value: unknown, column: string): string {
  if (typeof value !== 'string') refuse(column, 'a string', value);
  // Postgres cannot store NUL in text at all; refusing it on SQLite too keeps both backends alike.
  if (value.includes('\0')) throw new EncodeFailed(`column ${column}: text contains NUL (U+0000), which Postgres cannot store`);
  // A lone surrogate would be stored as U+FFFD by both backends: refuse it rather than change the text.
  if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed()) throw new EncodeFailed(`column ${column}: text is not well-formed UTF-16 (a lone surrogate)`);
  return value;
}

const toBigInt = (raw: unknown): unknown => (typeof raw === 'number' ? BigInt(raw) : raw);

export const TYPE_MAPPING: Readonly<Record<FieldKind, TypeMapping>> = {
  int32: {
    builder: 'field.int32()',
    ts: 'number',
    postgres: () => 'integer',
    sqlite: () => 'INTEGER',
    notes: 'Out of int32 range fails on Postgres (22003); SQLite stores any integer.',
    encode: (value, column) => {
      if (typeof value !== 'number' || !Number.isInteger(value)) refuse(column, 'an integer number', value);
      return value;
    },
    decode: { postgres: undefined, sqlite: (raw) => (typeof raw === 'bigint' ? Number(raw) : raw) },
  },
  int64: {
    builder: 'field.int64()',
    ts: 'bigint',
    postgres: () => 'bigint',
    sqlite: () => 'INTEGER',
    notes: 'Always a `bigint`: SQLite returns small integers as numbers, the ORM converts them.',
    encode: (value, column) => {
      if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
      if (typeof value !== 'bigint') refuse(column, 'a bigint', value);
      if (value < INT64_MIN || value > INT64_MAX) throw new EncodeFailed(`column ${column}: ${value} is outside int64`);
      return value;
    },
    decode: { postgres: toBigInt, sqlite: toBigInt },
  },
  double: {
    builder: 'field.double()',
    ts: 'number',
    postgres: () => 'double precision',
    sqlite: () => 'REAL',
    notes: 'NaN is refused (SQLite would store NULL); -0 is stored as 0; ±Infinity round-trips.',
    encode: (value, column) => {
      if (typeof value !== 'number' || Number.isNaN(value)) refuse(column, 'a number (not NaN)', value);
      // SQLite stores integral REALs as integers and loses the sign of -0; store 0 on both.
      return value === 0 ? 0 : value;
    },
    decode: { postgres: undefined, sqlite: (raw) => (typeof raw === 'bigint' ? Number(raw) : raw) },
  },
  string: {
    builder: 'field.string(120)',
    ts: 'string',
    postgres: (col) => `varchar(${col.length})`,
    sqlite: () => 'TEXT',
    notes: 'SQLite does not enforce the length; Postgres fails with 22001 (the healer widens it). NUL refused.',
    encode: text,
    decode: {},
  },
  text: {
    builder: 'field.text()',
    ts: 'string',
    postgres: () => 'text',
    sqlite: () => 'TEXT',
    notes: 'NUL (U+0000) and lone surrogates refused with `EncodeFailed` on both backends.',
    encode: text,
    decode: {},
  },
  bytes: {
    builder: 'field.bytes()',
    ts: 'Buffer',
    postgres: () => 'bytea',
    sqlite: () => 'BLOB',
    notes: 'A `Uint8Array` is accepted; reads are `Buffer`s.',
    encode: (value, column) => {
      if (Buffer.isBuffer(value)) return value;
      if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      return refuse(column, 'a Buffer', value);
    },
    decode: { postgres: undefined, sqlite: (raw) => (typeof raw === 'string' ? Buffer.from(raw) : raw) },
  },
  bool: {
    builder: 'field.bool()',
    ts: 'boolean',
    postgres: () => 'boolean',
    sqlite: () => 'INTEGER',
    notes: 'SQLite stores 0/1; reads are booleans on both.',
    encode: (value, column) => {
      if (typeof value !== 'boolean') refuse(column, 'a boolean', value);
      return value;
    },
    decode: { postgres: undefined, sqlite: (raw) => raw !== 0 && raw !== 0n && raw !== '0' },
  },
  time: {
    builder: 'field.time()',
    ts: 'Date',
    postgres: () => 'timestamptz(3)',
    sqlite: () => 'TEXT',
    notes: 'Millisecond precision, years 0001-9999. SQLite holds ISO-8601 UTC text with ms (`2024-05-01T12:00:00.123Z`), which sorts as time.',
    encode: (value, column) => {
      if (!(value instanceof Date)) refuse(column, 'a Date', value);
      if (Number.isNaN(value.getTime())) throw new EncodeFailed(`column ${column}: an invalid Date`);
      // Beyond these years ISO text gains a sign and six digits, and would no longer sort as time on SQLite.
      const year = value.getUTCFullYear();
      if (year < 1 || year > 9999) throw new EncodeFailed(`column ${column}: year ${year} is outside 0001-9999`);
      return value;
    },
    decode: { postgres: undefined, sqlite: (raw) => (typeof raw === 'string' ? new Date(raw) : raw) },
  },
  json: {
    builder: 'field.json<T>()',
    ts: 'T (JSON)',
    postgres: () => 'jsonb',
    sqlite: () => 'TEXT',
    notes: 'Bound as JSON text, read parsed. Object key order is not kept by jsonb; `\\u0000` refused (jsonb cannot store it).',
    encode: (value, column) => {
      let json: string | undefined;
      try {
        json = JSON.stringify(value);
      } catch (error) {
        throw new EncodeFailed(`column ${column}: not JSON (${(error as Error).message})`);
      }
      if (json === undefined) refuse(column, 'a JSON value', value);
      if (json.includes('\\u0000')) throw new EncodeFailed(`column ${column}: JSON text contains \\u0000, which Postgres jsonb cannot store`);
      return json;
    },
    decode: { postgres: undefined, sqlite: (raw) => (typeof raw === 'string' ? JSON.parse(raw) : raw) },
  },
  uuid: {
    builder: 'field.uuid()',
    ts: 'string',
    postgres: () => 'uuid',
    sqlite: () => 'TEXT',
    notes: 'Validated and stored lowercase, so reads match on both backends.',
    encode: (value, column) => {
      if (typeof value !== 'string' || !UUID.test(value)) refuse(column, 'a uuid string', value);
      return value.toLowerCase();
    },
    decode: {},
  },
};

/** The column type of `col` on `backend`, from the table. */
export function columnType(backend: Backend, col: ColumnMeta): string {
  const mapping = TYPE_MAPPING[col.kind];
  return backend === 'postgres' ? mapping.postgres(col) : mapping.sqlite(col);
}

/**
 * A TypeScript value as a parameter for a column of `kind`; null and undefined bind NULL, except
 * that null in a non-nullable json column is the JSON document `null`.
 */
export function encodeValue(kind: FieldKind, value: unknown, column: string, nullable = true): Value {
  if (value === null || value === undefined) return kind === 'json' && !nullable && value === null ? 'null' : null;
  return TYPE_MAPPING[kind].encode(value, column);
}

/** The decoder of a column kind on a backend, or undefined when the driver's value is already right. */
export function decoderFor(backend: Backend, kind: FieldKind): ((raw: unknown) => unknown) | undefined {
  return TYPE_MAPPING[kind].decode[backend];
}

const SAMPLE: Omit<ColumnMeta, 'kind'> = { name: 'c', length: 120, nullable: false, unique: false, autoIncrement: false, primaryKey: false };

/** The markdown of docs/orm-types.md, generated from TYPE_MAPPING. */
export function renderTypesDoc(): string {
  const lines = [
    '# ORM type mapping',
    '',
    '<!-- Generated from src/data/orm/types.ts (TYPE_MAPPING) by `npx tsx scripts/gen-orm-types.ts`; do not edit by hand. -->',
    '',
    'One table in the code decides how each field kind is declared, stored and read on both backends;',
    'a row reads back identically from Postgres and SQLite.',
    '',
    '| field | TypeScript | Postgres | SQLite | notes |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const kind of FIELD_KINDS) {
    const mapping = TYPE_MAPPING[kind];
    const col: ColumnMeta = { ...SAMPLE, kind };
    lines.push(`| \`${mapping.builder}\` | \`${mapping.ts}\` | \`${mapping.postgres(col)}\` | \`${mapping.sqlite(col)}\` | ${mapping.notes} |`);
  }
  lines.push(
    '',
    'Modifiers: `.nullable()` (the type becomes `T | null`), `.default(value | NOW | RANDOM_UUID | sqlExpr(...))`,',
    '`.unique()`, `.index()`, `.check(sql)`, `.primaryKey()`, `.autoIncrement()` (int32/int64 primary key:',
    '`GENERATED BY DEFAULT AS IDENTITY` on Postgres, `INTEGER PRIMARY KEY AUTOINCREMENT` on SQLite).',
    '',
    'Defaults: `NOW` is `now()` on Postgres and `strftime(\'%Y-%m-%dT%H:%M:%fZ\',\'now\')` on SQLite;',
    '`RANDOM_UUID` is `gen_random_uuid()` on Postgres and a `randomblob` expression (v4 layout) on SQLite.',
    '',
  );
  return lines.join('\n');
}
