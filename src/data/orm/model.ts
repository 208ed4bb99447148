/**
 * Models: a table declared once in TypeScript. `defineModel` validates the declaration, infers the
 * row type from the fields, and normalizes it into `ModelMeta`, the description the dialects, the
 * Syncer and the Healer read (they never look at the field builders).
 *
 * ModelMeta conventions (shared with the schema helper):
 * - `uniques` lists every unique constraint, single-column ones included (a `.unique()` column has
 *   `ColumnMeta.unique` and a `[column]` entry); DDL emits them as table constraints named
 *   `IndexMeta`-style (`<table>_<cols>_key`), never inline.
 * - `indexes` lists non-unique and unique indexes from `.index()` and `options.indexes`, named
 *   `<table>_<cols>_idx` unless the author named them; names over 63 bytes are shortened with a hash.
 * - `checks` holds author-written CHECK expressions, in declaration order.
 * - An auto-increment column is the primary key (single-column) and int32/int64.
 * - Column name = field key (always quoted, so case is kept).
 */
import { createHash } from 'node:crypto';
import type { Queryable } from '../database.js';
import { InvalidModel } from './errors.js';
import type { Backend, Value } from '../values.js';
import type { DefaultSpec, FieldKind, Fields, Field, ValueOf } from './fields.js';
import type { ReplicatedOption } from '../replication/targets.js';

export interface ColumnMeta {
  readonly name: string;
  readonly kind: FieldKind;
  readonly length?: number;
  readonly nullable: boolean;
  readonly default?: DefaultSpec;
  readonly unique: boolean;
  readonly autoIncrement: boolean;
  /** Part of the primary key. */
  readonly primaryKey: boolean;
}

export interface IndexMeta {
  readonly name: string;
  readonly columns: readonly string[];
  readonly unique: boolean;
}

export interface ModelMeta {
  readonly table: string;
  readonly columns: readonly ColumnMeta[];
  readonly primaryKey: readonly string[];
  readonly indexes: readonly IndexMeta[];
  readonly uniques: readonly (readonly string[])[];
  readonly checks: readonly string[];
  readonly versionColumn?: string;
}

/** What the Healer is told about a failed statement (see `Orm`'s `healer` option). */
export interface HealContext {
  readonly backend: Backend;
  readonly model: ModelMeta;
  /** Where to run DDL: the transaction when the statement ran in one (rolled back to its savepoint on Postgres), else the database. */
  readonly db: Queryable;
  readonly inTransaction: boolean;
  readonly sql: string;
  readonly params: readonly Value[];
}

/**
 * Hooked into every ORM statement: on a failure, `heal` either returns a record of what it fixed
 * (the statement is retried once; if the retry fails its error propagates with `healRecord`
 * attached) or undefined (the error propagates as is).
 */
export interface OrmHealer<Rec extends object = object> {
  heal(error: unknown, context: HealContext): Promise<Rec | undefined>;
}

/** What a hook is told about the write it runs in. */
export interface HookContext {
  /** `upsert` for beforeSave of an upsert, which does not know yet whether it inserts or updates. */
  readonly op: 'insert' | 'update' | 'delete' | 'upsert';
  /** The `Orm` (bound to the transaction when there is one); typed loosely to keep models free of the ORM. */
  readonly orm: unknown;
}

export interface ModelHooks<R> {
  /** Before an insert or update: may change the values (return a new object, or nothing to keep them). */
  beforeSave?(values: Partial<R>, ctx: HookContext): void | Partial<R> | Promise<void | Partial<R>>;
  /** After an insert or update, inside the same transaction, with the row as written. */
  afterSave?(row: R, ctx: HookContext): void | Promise<void>;
  /** After a delete, inside the same transaction, with the row's primary key (and the row when it was read). */
  afterDelete?(row: Partial<R>, ctx: HookContext): void | Promise<void>;
}

export interface ModelIndexOption {
  readonly columns: readonly string[];
  readonly unique?: boolean;
  readonly name?: string;
}

export interface ModelOptions<F extends Fields, V extends string> {
  /** Composite primary key (instead of `.primaryKey()` on fields). */
  readonly primaryKey?: readonly (keyof F & string)[];
  /** The optimistic-lock column: an int32/int64 field; inserts set it to 1, updates match and increment it. */
  readonly version?: V;
  readonly indexes?: readonly ModelIndexOption[];
  /** Composite unique constraints. */
  readonly uniques?: readonly (readonly (keyof F & string)[])[];
  /** Table-level CHECK expressions (author-written SQL). */
  readonly checks?: readonly string[];
  readonly hooks?: ModelHooks<RowOfFields<F>>;
  /**
   * Replicate this model's rows by oplog (docs/replication.md): every write appends an entry in its own
   * transaction when the `Orm` has an oplog; remote entries are applied through this policy.
   */
  readonly replicated?: ReplicatedOption;
}

export type RowOfFields<F extends Fields> = { -readonly [K in keyof F]: ValueOf<F[K]> };

type OptionalKeys<F extends Fields, V extends string> = {
  [K in keyof F]: F[K] extends Field<unknown, boolean, true> ? K : K extends V ? K : never;
}[keyof F];
type RequiredKeys<F extends Fields, V extends string> = Exclude<keyof F, OptionalKeys<F, V>>;

export type InsertOfFields<F extends Fields, V extends string> = { [K in RequiredKeys<F, V>]: ValueOf<F[K]> } & {
  [K in OptionalKeys<F, V>]?: ValueOf<F[K]>;
};

/**
 * Brands of the builder's objects: module-private symbols, so JSON from a request (which has no
 * symbol keys) cannot pass for a column reference or a model. Never recognise these by shape.
 */
const COLUMN = Symbol('molo.orm.column');
const MODEL = Symbol('molo.orm.model');

/** A typed reference to a model's column, for filters, ordering, joins and selections: `User.c.email`. */
export interface ColumnRef<T = unknown> {
  readonly [COLUMN]: true;
  readonly table: string;
  readonly name: string;
  readonly kind: FieldKind;
  readonly nullable: boolean;
  /** Phantom: the column's value type. */
  readonly __type?: T;
}

export type ColumnRefs<F extends Fields> = { readonly [K in keyof F]: ColumnRef<ValueOf<F[K]>> };

export interface Model<F extends Fields = Fields, V extends string = string> {
  readonly [MODEL]: true;
  readonly table: string;
  readonly fields: F;
  readonly meta: ModelMeta;
  /** Column references: `User.c.email`. */
  readonly c: ColumnRefs<F>;
  readonly hooks: ModelHooks<RowOfFields<F>>;
  /** The declared replication policy, when the model is replicated. */
  readonly replicated?: ReplicatedOption;
  /** Named relations, registered by `hasMany`/`belongsTo`/`manyToMany` (relations.ts). */
  readonly relations: Map<string, unknown>;
  /** Phantom: the version column's key. */
  readonly __version?: V;
}

// biome-ignore lint: `any` keeps every model assignable here.
export type AnyModel = Model<any, any>;

/** The row type of a model: `type User = RowOf<typeof User>`. */
export type RowOf<M> = M extends Model<infer F, string> ? RowOfFields<F> : never;
/** What an insert takes: defaulted, nullable, auto-increment and version columns are optional. */
export type InsertOf<M> = M extends Model<infer F, infer V> ? InsertOfFields<F, V> : never;
/** A column name of a model. */
export type ColumnOf<M> = M extends Model<infer F, string> ? keyof F & string : never;

/** Postgres's identifier limit (NAMEDATALEN - 1), in bytes; also what quoteIdent enforces. */
export const MAX_IDENTIFIER_BYTES = 63;

/** Checks an identifier: non-empty, no NUL, at most 63 bytes of UTF-8. Returns the reason when invalid. */
export function identifierProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'must be a non-empty string';
  if (name.includes('\0')) return 'contains NUL';
  if (Buffer.byteLength(name) > MAX_IDENTIFIER_BYTES) return `longer than ${MAX_IDENTIFIER_BYTES} bytes`;
  return undefined;
}

/** A constraint or index name from its parts, shortened with a hash to stay within 63 bytes. */
export function constraintName(table: string, columns: readonly string[], suffix: string): string {
  const name = [table, ...columns, suffix].join('_');
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER_BYTES) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  // Cut on characters, then trim bytes, so a multi-byte name never splits a character.
  let head = [table, ...columns].join('_');
  while (Buffer.byteLength(`${head}_${hash}_${suffix}`) > MAX_IDENTIFIER_BYTES) head = head.slice(0, -1);
  return `${head}_${hash}_${suffix}`;
}

function fail(table: string, message: string): never {
  throw new InvalidModel(table, message);
}

/**
 * Declares a model. The row type is inferred: `type User = RowOf<typeof User>`.
 *
 * ```ts
 * const User = defineModel('users', {
 *   id: field.int64().primaryKey().autoIncrement(),
 *   email: field.string(120).unique(),
 *   version: field.int64(),
 * }, { version: 'version' });
 * ```
 */
export function defineModel<const F extends Fields, const V extends keyof F & string = never>(
  table: string,
  fields: F,
  options: ModelOptions<F, V> = {},
): Model<F, V> {
  const tableProblem = identifierProblem(table);
  if (tableProblem !== undefined) fail(String(table), `table name ${tableProblem}`);
  const names = Object.keys(fields);
  if (names.length === 0) fail(table, 'a model needs at least one field');

  const columns: ColumnMeta[] = [];
  const fieldPk: string[] = [];
  const indexes: IndexMeta[] = [];
  const uniques: string[][] = [];
  const checks: string[] = [];
  for (const name of names) {
    const problem = identifierProblem(name);
    if (problem !== undefined) fail(table, `column name ${JSON.stringify(name)} ${problem}`);
    const spec = fields[name]!.spec;
    if (spec.kind === 'string' && (!Number.isInteger(spec.length) || spec.length! < 1 || spec.length! > 10_485_760)) {
      fail(table, `${name}: string(length) needs an integer length from 1 to 10485760 (Postgres's varchar limit)`);
    }
    if (spec.autoIncrement && spec.kind !== 'int32' && spec.kind !== 'int64') fail(table, `${name}: autoIncrement needs an int32 or int64 field`);
    if (spec.primaryKey) fieldPk.push(name);
    if (spec.unique) uniques.push([name]);
    if (spec.index) indexes.push({ name: constraintName(table, [name], 'idx'), columns: [name], unique: false });
    checks.push(...spec.checks);
  }

  if (options.primaryKey !== undefined && fieldPk.length > 0) fail(table, 'declare the primary key either on fields or in options.primaryKey, not both');
  const primaryKey = options.primaryKey !== undefined ? [...options.primaryKey] : fieldPk;
  if (primaryKey.length === 0) fail(table, 'a model needs a primary key (field .primaryKey() or options.primaryKey)');
  for (const column of primaryKey) if (!names.includes(column)) fail(table, `primary key column ${column} is not a field`);
  if (new Set(primaryKey).size !== primaryKey.length) fail(table, 'primary key lists a column twice');

  for (const name of names) {
    const spec = fields[name]!.spec;
    if (spec.autoIncrement && (primaryKey.length !== 1 || primaryKey[0] !== name)) fail(table, `${name}: autoIncrement is only for a single-column primary key`);
    if (spec.nullable && primaryKey.includes(name)) fail(table, `${name}: a primary key column cannot be nullable`);
    columns.push({
      name,
      kind: spec.kind,
      ...(spec.length === undefined ? {} : { length: spec.length }),
      nullable: spec.nullable,
      ...(spec.default === undefined ? {} : { default: spec.default }),
      unique: spec.unique,
      autoIncrement: spec.autoIncrement,
      primaryKey: primaryKey.includes(name),
    });
  }

  const versionColumn = options.version;
  if (versionColumn !== undefined) {
    const column = columns.find((c) => c.name === versionColumn);
    if (column === undefined) fail(table, `version column ${versionColumn} is not a field`);
    if (column.kind !== 'int32' && column.kind !== 'int64') fail(table, `version column ${versionColumn} must be int32 or int64`);
    if (column.nullable || column.primaryKey) fail(table, `version column ${versionColumn} must be non-null and not part of the primary key`);
  }

  for (const unique of options.uniques ?? []) {
    for (const column of unique) if (!names.includes(column)) fail(table, `unique constraint column ${column} is not a field`);
    uniques.push([...unique]);
  }
  for (const index of options.indexes ?? []) {
    if (index.columns.length === 0) fail(table, 'an index needs at least one column');
    for (const column of index.columns) if (!names.includes(column)) fail(table, `index column ${column} is not a field`);
    const name = index.name ?? constraintName(table, index.columns, index.unique === true ? 'uidx' : 'idx');
    const problem = identifierProblem(name);
    if (problem !== undefined) fail(table, `index name ${JSON.stringify(name)} ${problem}`);
    indexes.push({ name, columns: [...index.columns], unique: index.unique === true });
  }
  const indexNames = new Set<string>();
  for (const index of indexes) {
    if (indexNames.has(index.name)) fail(table, `two indexes are named ${index.name}`);
    indexNames.add(index.name);
  }
  checks.push(...(options.checks ?? []));
  const replicated = options.replicated;
  if (replicated !== undefined) {
    const policy = (replicated as { policy?: unknown }).policy;
    if (policy !== 'optimistic' && policy !== 'lww' && policy !== 'hook') fail(table, `replicated.policy must be optimistic, lww or hook, got ${JSON.stringify(policy)}`);
    if (policy === 'hook' && typeof (replicated as { resolve?: unknown }).resolve !== 'function') fail(table, 'replicated.policy hook needs a resolve function');
    if (policy === 'optimistic' && versionColumn === undefined) fail(table, 'replicated.policy optimistic needs a version column (options.version)');
  }

  const meta: ModelMeta = {
    table,
    columns,
    primaryKey,
    indexes,
    uniques,
    checks,
    ...(versionColumn === undefined ? {} : { versionColumn }),
  };
  const refs: Record<string, ColumnRef> = {};
  for (const col of columns) refs[col.name] = Object.freeze({ [COLUMN]: true, table, name: col.name, kind: col.kind, nullable: col.nullable }) as ColumnRef;
  return { [MODEL]: true, table, fields, meta, c: Object.freeze(refs), hooks: options.hooks ?? {}, ...(replicated === undefined ? {} : { replicated }), relations: new Map() } as unknown as Model<F, V>;
}

/** A column reference made by `defineModel` (never a look-alike object). */
export function isColumnRef(value: unknown): value is ColumnRef {
  return typeof value === 'object' && value !== null && (value as Partial<Record<typeof COLUMN, unknown>>)[COLUMN] === true;
}

/** A model made by `defineModel` (never a look-alike object). */
export function isModel(value: unknown): value is AnyModel {
  return typeof value === 'object' && value !== null && (value as Partial<Record<typeof MODEL, unknown>>)[MODEL] === true;
}

/** The column of `meta` called `name`, or undefined. */
export function columnOf(meta: ModelMeta, name: string): ColumnMeta | undefined {
  return meta.columns.find((column) => column.name === name);
}
