/**
 * Field builders: a model's columns are declared with these, and the row type is inferred from the
 * declaration (the phantom type parameters), so there is no code generation step.
 *
 * Builders are immutable: every modifier returns a new field, so a shared base
 * (`const money = field.int64().default(0n)`) can be reused safely.
 */
import type { Json } from '../values.js';

export type FieldKind = 'int32' | 'int64' | 'double' | 'string' | 'text' | 'bytes' | 'bool' | 'time' | 'json' | 'uuid';

/** The kinds, in the order the type-mapping table and its doc list them. */
export const FIELD_KINDS: readonly FieldKind[] = ['int32', 'int64', 'double', 'string', 'text', 'bytes', 'bool', 'time', 'json', 'uuid'];

/**
 * A SQL expression written by the model's author (a constant, reviewed fragment: never user input),
 * used where DDL cannot bind a value: column defaults.
 */
export interface SqlExpr {
  readonly kind: 'sqlExpr';
  readonly sql: string;
}

/** A raw SQL expression for a column default, e.g. `sqlExpr("'draft'")`. Constant text only. */
export function sqlExpr(sql: string): SqlExpr {
  return { kind: 'sqlExpr', sql };
}

/**
 * A column default as the Syncer and the dialects see it:
 * - `value`: a literal, rendered per backend by the dialect (`Dialect.defaultSql`);
 * - `now`: the current time, `now()` on Postgres, ISO-8601 text with ms on SQLite;
 * - `uuid`: a random v4 uuid, `gen_random_uuid()` on Postgres, a randomblob expression on SQLite;
 * - `sql`: an author-written expression, emitted as is on both backends.
 */
export type DefaultSpec =
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'now' }
  | { readonly kind: 'uuid' }
  | { readonly kind: 'sql'; readonly sql: string };

/** `field.time().default(NOW)`: the time of the insert, set by the server. */
export const NOW: unique symbol = Symbol('molo.orm.now');
/** `field.uuid().default(RANDOM_UUID)`: a random uuid, set by the server. */
export const RANDOM_UUID: unique symbol = Symbol('molo.orm.randomUuid');

export interface FieldSpec {
  readonly kind: FieldKind;
  /** `string(length)`: the varchar length. */
  readonly length?: number;
  readonly nullable: boolean;
  readonly default?: DefaultSpec;
  readonly unique: boolean;
  readonly index: boolean;
  /** CHECK expressions (author-written SQL) attached to this column. */
  readonly checks: readonly string[];
  readonly primaryKey: boolean;
  readonly autoIncrement: boolean;
}

/**
 * A column declaration. `T` is the TypeScript value type, `N` whether NULL is allowed, `O` whether
 * the column may be left out of an insert (nullable, defaulted or auto-incremented).
 */
export class Field<T, N extends boolean = false, O extends boolean = false> {
  /** Phantom members carrying the types; never set at run time. */
  declare readonly __type: T;
  declare readonly __nullable: N;
  declare readonly __optional: O;

  constructor(readonly spec: FieldSpec) {}

  private with<T2 = T, N2 extends boolean = N, O2 extends boolean = O>(patch: Partial<FieldSpec>): Field<T2, N2, O2> {
    return new Field<T2, N2, O2>({ ...this.spec, ...patch });
  }

  /** NULL allowed; the row type becomes `T | null` and inserts may leave it out. */
  nullable(): Field<T, true, true> {
    return this.with<T, true, true>({ nullable: true });
  }

  /** A default: a value of the column's type, `NOW` (time), `RANDOM_UUID` (uuid) or `sqlExpr(...)`. */
  default(value: T | SqlExpr | (T extends Date ? typeof NOW : never) | (T extends string ? typeof RANDOM_UUID : never)): Field<T, N, true> {
    let spec: DefaultSpec;
    if (value === NOW) spec = { kind: 'now' };
    else if (value === RANDOM_UUID) spec = { kind: 'uuid' };
    else if (isSqlExpr(value)) spec = { kind: 'sql', sql: value.sql };
    else spec = { kind: 'value', value };
    return this.with<T, N, true>({ default: spec });
  }

  unique(): Field<T, N, O> {
    return this.with({ unique: true });
  }

  /** A single-column index named `<table>_<column>_idx`. */
  index(): Field<T, N, O> {
    return this.with({ index: true });
  }

  /** A CHECK constraint; `expr` is constant SQL written by the model's author, e.g. `"price >= 0"`. */
  check(expr: string): Field<T, N, O> {
    return this.with({ checks: [...this.spec.checks, expr] });
  }

  primaryKey(): Field<T, N, O> {
    return this.with({ primaryKey: true });
  }

  /** Server-assigned increasing integer (identity on Postgres, rowid alias on SQLite); int32/int64 only. */
  autoIncrement(): Field<T, N, true> {
    return this.with<T, N, true>({ autoIncrement: true });
  }
}

function isSqlExpr(value: unknown): value is SqlExpr {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'sqlExpr' && typeof (value as { sql?: unknown }).sql === 'string';
}

function make<T>(kind: FieldKind, length?: number): Field<T> {
  return new Field<T>({ kind, ...(length === undefined ? {} : { length }), nullable: false, unique: false, index: false, checks: [], primaryKey: false, autoIncrement: false });
}

/** The field builders. */
export const field = {
  /** 32-bit integer: `number`. */
  int32: (): Field<number> => make<number>('int32'),
  /** 64-bit integer: `bigint` on both backends. */
  int64: (): Field<bigint> => make<bigint>('int64'),
  /** Double precision float: `number` (NaN refused: SQLite cannot store it). */
  double: (): Field<number> => make<number>('double'),
  /** Text of at most `length` characters (varchar on Postgres; SQLite does not enforce it). */
  string: (length: number): Field<string> => make<string>('string', length),
  /** Unbounded text. */
  text: (): Field<string> => make<string>('text'),
  /** Binary: `Buffer`. */
  bytes: (): Field<Buffer> => make<Buffer>('bytes'),
  bool: (): Field<boolean> => make<boolean>('bool'),
  /** An instant, millisecond precision: `Date`. */
  time: (): Field<Date> => make<Date>('time'),
  /** A JSON document: `T` (default any JSON value). */
  json: <T = Json>(): Field<T> => make<T>('json'),
  /** A uuid: a lowercase `string`. */
  uuid: (): Field<string> => make<string>('uuid'),
};

export type AnyField = Field<any, boolean, boolean>;
export type Fields = Record<string, AnyField>;

/** The value type a field reads as. */
export type ValueOf<F> = F extends Field<infer T, infer N, boolean> ? (N extends true ? T | null : T) : never;
