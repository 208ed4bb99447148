/**
 * Filter conditions: plain data built by `eq`, `lt`, `inList`, `and`, ... over typed column
 * references, compiled to SQL with every value a bound parameter (encoded for its column's kind, so
 * a `Date` compares as the same instant and a uuid as lowercase on both backends).
 */
import { InvalidQuery } from './errors.js';
import type { Value } from '../values.js';
import type { Dialect } from './dialect.js';
import { quoteIdent } from './dialect.js';
import { isColumnRef, type ColumnRef } from './model.js';
import { compileSql, isSqlFragment, type SqlFragment } from './sql.js';
import { encodeValue } from './types.js';

/** The comparison operators, the only text a condition puts between its operands. */
const CMP_OPS = new Set(['=', '<>', '<', '<=', '>', '>=']);
type CmpOp = '=' | '<>' | '<' | '<=' | '>' | '>=';

/** The brand of conditions: module-private, so JSON cannot pass for one (see isCondition). */
const CONDITION = Symbol('molo.orm.condition');

type Node =
  | { readonly t: 'cmp'; readonly col: ColumnRef; readonly op: CmpOp; readonly value: unknown }
  | { readonly t: 'in'; readonly col: ColumnRef; readonly values: readonly unknown[]; readonly negate: boolean }
  | { readonly t: 'like'; readonly col: ColumnRef; readonly pattern: string }
  | { readonly t: 'null'; readonly col: ColumnRef; readonly negate: boolean }
  | { readonly t: 'and' | 'or'; readonly items: readonly Condition[] }
  | { readonly t: 'not'; readonly item: Condition }
  | { readonly t: 'sql'; readonly fragment: SqlFragment };

/** A filter built by `eq`, `and`, `where(sql...)`, ...: plain data, branded so it cannot be forged. */
export type Condition = Node & { readonly [CONDITION]: true };

/**
 * Freezes a condition its constructor wrote as one literal, brand included: a spread of the node
 * plus a computed symbol key takes V8's slow path (2-4 µs a condition, most of a query's build).
 */
const make = (condition: Condition): Condition => Object.freeze(condition);

/** A condition made by this module's constructors (an object of the same shape from JSON is not). */
export function isCondition(value: unknown): value is Condition {
  return typeof value === 'object' && value !== null && (value as Partial<Record<typeof CONDITION, unknown>>)[CONDITION] === true;
}

type Operand<T> = T | ColumnRef<T> | ColumnRef<NonNullable<T>>;

const cmp = (col: ColumnRef, op: CmpOp, value: unknown): Condition => make({ t: 'cmp', col, op, value, [CONDITION]: true });
const nullTest = (col: ColumnRef, negate: boolean): Condition => make({ t: 'null', col, negate, [CONDITION]: true });

/** `col = value` (or another column); `eq(col, null)` is `IS NULL`. */
export const eq = <T>(col: ColumnRef<T>, value: Operand<T>): Condition => (value === null ? nullTest(col, false) : cmp(col, '=', value));
/** `col <> value`; `ne(col, null)` is `IS NOT NULL`. */
export const ne = <T>(col: ColumnRef<T>, value: Operand<T>): Condition => (value === null ? nullTest(col, true) : cmp(col, '<>', value));
export const lt = <T>(col: ColumnRef<T>, value: Operand<NonNullable<T>>): Condition => cmp(col, '<', value);
export const lte = <T>(col: ColumnRef<T>, value: Operand<NonNullable<T>>): Condition => cmp(col, '<=', value);
export const gt = <T>(col: ColumnRef<T>, value: Operand<NonNullable<T>>): Condition => cmp(col, '>', value);
export const gte = <T>(col: ColumnRef<T>, value: Operand<NonNullable<T>>): Condition => cmp(col, '>=', value);
/** `col IN (values)`; an empty list matches nothing. */
export const inList = <T>(col: ColumnRef<T>, values: readonly NonNullable<T>[]): Condition => make({ t: 'in', col, values, negate: false, [CONDITION]: true });
export const notInList = <T>(col: ColumnRef<T>, values: readonly NonNullable<T>[]): Condition => make({ t: 'in', col, values, negate: true, [CONDITION]: true });
/** Case-sensitive LIKE on both backends: `%` any run, `_` one character, `\` escapes. */
export const like = (col: ColumnRef<string> | ColumnRef<string | null>, pattern: string): Condition => make({ t: 'like', col, pattern, [CONDITION]: true });
export const isNull = (col: ColumnRef): Condition => nullTest(col, false);
export const isNotNull = (col: ColumnRef): Condition => nullTest(col, true);
export const and = (...items: Condition[]): Condition => make({ t: 'and', items, [CONDITION]: true });
export const or = (...items: Condition[]): Condition => make({ t: 'or', items, [CONDITION]: true });
export const not = (item: Condition): Condition => make({ t: 'not', item, [CONDITION]: true });
/** A raw condition from the `sql` tag (its values are bound). */
export const where = (fragment: SqlFragment): Condition => make({ t: 'sql', fragment, [CONDITION]: true });

/** How conditions compile: the dialect, the parameters so far, and whether to qualify columns. */
export interface CompileContext {
  readonly dialect: Dialect;
  readonly params: Value[];
  /** Tables the statement reads (the first is the main one); columns are qualified when there are several. */
  readonly tables: readonly string[];
}

export function columnSql(col: ColumnRef, cc: CompileContext): string {
  if (!isColumnRef(col)) throw new InvalidQuery('not a column reference (use Model.c.<column>)');
  if (!cc.tables.includes(col.table)) throw new InvalidQuery(`column ${col.table}.${col.name} is not from a table of this query (${cc.tables.join(', ')}); join it first`);
  return cc.tables.length > 1 ? `${quoteIdent(col.table)}.${quoteIdent(col.name)}` : quoteIdent(col.name);
}

function bind(cc: CompileContext, value: Value): string {
  cc.params.push(value);
  return cc.dialect.placeholder(cc.params.length);
}

/**
 * The SQL of a condition. Each node is checked again here (brand, operator, parts), since the
 * constructors take whatever a caller casts into them: only constant text from this module reaches
 * the statement, and everything else is a bound value or a typed refusal.
 */
export function compileCondition(cond: Condition, cc: CompileContext): string {
  if (!isCondition(cond)) throw new InvalidQuery('not a condition (build one with eq, and, where(sql`...`), ... or pass { column: value })');
  switch (cond.t) {
    case 'cmp': {
      if (!CMP_OPS.has(cond.op)) throw new InvalidQuery(`not a comparison operator: ${JSON.stringify(String(cond.op))}`);
      const left = columnSql(cond.col, cc);
      const right = isColumnRef(cond.value) ? columnSql(cond.value, cc) : bind(cc, encodeValue(cond.col.kind, cond.value, cond.col.name));
      return `${left} ${cond.op} ${right}`;
    }
    case 'in': {
      if (!Array.isArray(cond.values)) throw new InvalidQuery('inList() needs an array of values');
      if (cond.values.length === 0) return cond.negate ? '1 = 1' : '1 = 0';
      const left = columnSql(cond.col, cc);
      const encoded = cond.values.map((v) => encodeValue(cond.col.kind, v, cond.col.name));
      const array = cc.dialect.arrayParam(encoded);
      if (array !== undefined) {
        const test = cc.dialect.inArray(left, bind(cc, array));
        return cond.negate ? `NOT (${test})` : test;
      }
      const list = encoded.map((v) => bind(cc, v)).join(', ');
      return `${left} ${cond.negate ? 'NOT IN' : 'IN'} (${list})`;
    }
    case 'like':
      if (typeof cond.pattern !== 'string') throw new InvalidQuery('like() needs a string pattern');
      return cc.dialect.like(columnSql(cond.col, cc), bind(cc, encodeValue('text', cc.dialect.likeParam(cond.pattern), cond.col.name)));
    case 'null':
      return `${columnSql(cond.col, cc)} IS ${cond.negate ? 'NOT ' : ''}NULL`;
    case 'and':
    case 'or': {
      if (!Array.isArray(cond.items)) throw new InvalidQuery(`${cond.t}() needs conditions`);
      if (cond.items.length === 0) return cond.t === 'and' ? '1 = 1' : '1 = 0';
      if (cond.items.length === 1) return compileCondition(cond.items[0]!, cc);
      return `(${cond.items.map((item) => compileCondition(item, cc)).join(cond.t === 'and' ? ' AND ' : ' OR ')})`;
    }
    case 'not':
      return `NOT (${compileCondition(cond.item, cc)})`;
    case 'sql':
      if (!isSqlFragment(cond.fragment)) throw new InvalidQuery('where() needs a fragment from the sql tag');
      return `(${compileSql(cond.fragment, cc.params).text})`;
    default:
      throw new InvalidQuery(`not a condition: ${JSON.stringify((cond as { t?: unknown }).t)}`);
  }
}

/** `{ email: 'a', deletedAt: null }` as equality conditions on the model's columns. */
export function matchConditions(refs: Readonly<Record<string, ColumnRef>>, table: string, match: Record<string, unknown>): Condition[] {
  if (typeof match !== 'object' || match === null || Array.isArray(match)) throw new InvalidQuery('where() takes a condition or { column: value } equalities');
  const out: Condition[] = [];
  for (const key of Object.keys(match)) {
    const col = Object.hasOwn(refs, key) ? refs[key] : undefined;
    if (col === undefined) throw new InvalidQuery(`${table} has no column ${JSON.stringify(key)}`);
    const value = match[key];
    if (value === undefined) continue;
    out.push(value === null ? nullTest(col, false) : cmp(col, '=', value));
  }
  return out;
}

const refKeys = new WeakMap<ColumnRef, string>();
const refIds = new Map<string, string>();
/** Distinct columns given short keys at most (a model's columns are a handful; more get their long key). */
const REF_IDS_MAX = 4_096;

/**
 * A column's part of a plan key: every property of it that the statement's text or decoding reads.
 * A frozen reference (each one `defineModel` makes) keeps a short key, `#n.`, for the same properties.
 */
export function columnKey(col: ColumnRef): string {
  if (!isColumnRef(col)) throw new InvalidQuery('not a column reference (use Model.c.<column>)');
  const known = refKeys.get(col);
  if (known !== undefined) return known;
  // Length-prefixed, so no name can pass for another name plus a separator (or for a short key).
  const long = `${col.table.length}:${col.table}${col.name.length}:${col.name}${col.kind}${col.nullable ? '?' : '!'}`;
  if (!Object.isFrozen(col)) return long;
  let id = refIds.get(long);
  if (id === undefined) {
    if (refIds.size >= REF_IDS_MAX) return long;
    refIds.set(long, (id = `#${refIds.size}.`));
  }
  refKeys.set(col, id);
  return id;
}

/**
 * A condition's shape (its nodes, operators and columns, not its values) for the plan cache, with
 * its values bound into `params` in the order compileCondition binds them. Runs on every call, so
 * each node passes the same checks as in compileCondition (brand, operator, parts) and each value is
 * encoded afresh; undefined for a shape a plan does not cover (a raw `sql` fragment).
 */
export function conditionKey(cond: Condition, dialect: Dialect, params: Value[]): string | undefined {
  if (!isCondition(cond)) throw new InvalidQuery('not a condition (build one with eq, and, where(sql`...`), ... or pass { column: value })');
  switch (cond.t) {
    case 'cmp': {
      if (!CMP_OPS.has(cond.op)) throw new InvalidQuery(`not a comparison operator: ${JSON.stringify(String(cond.op))}`);
      const col = columnKey(cond.col);
      if (isColumnRef(cond.value)) return `c${cond.op}\u0001${col}\u0001${columnKey(cond.value)}\u0002`;
      params.push(encodeValue(cond.col.kind, cond.value, cond.col.name));
      return `c${cond.op}\u0001${col}\u0002`;
    }
    case 'in': {
      if (!Array.isArray(cond.values)) throw new InvalidQuery('inList() needs an array of values');
      const negate = cond.negate ? 'n' : 'i';
      if (cond.values.length === 0) return `${negate}0\u0002`;
      const col = columnKey(cond.col);
      const encoded = cond.values.map((v) => encodeValue(cond.col.kind, v, cond.col.name));
      const array = dialect.arrayParam(encoded);
      if (array !== undefined) {
        params.push(array);
        return `${negate}a\u0001${col}\u0002`;
      }
      // One placeholder per value: the count is part of the text.
      for (const v of encoded) params.push(v);
      return `${negate}${encoded.length}\u0001${col}\u0002`;
    }
    case 'like': {
      if (typeof cond.pattern !== 'string') throw new InvalidQuery('like() needs a string pattern');
      const col = columnKey(cond.col);
      params.push(encodeValue('text', dialect.likeParam(cond.pattern), cond.col.name));
      return `l\u0001${col}\u0002`;
    }
    case 'null':
      return `${cond.negate ? 'N' : 'u'}\u0001${columnKey(cond.col)}\u0002`;
    case 'and':
    case 'or': {
      if (!Array.isArray(cond.items)) throw new InvalidQuery(`${cond.t}() needs conditions`);
      let key = cond.t === 'and' ? '&(' : '|(';
      for (const item of cond.items) {
        const part = conditionKey(item, dialect, params);
        if (part === undefined) return undefined;
        key += part;
      }
      return `${key})`;
    }
    case 'not': {
      const part = conditionKey(cond.item, dialect, params);
      return part === undefined ? undefined : `!(${part})`;
    }
    case 'sql':
      return undefined;
    default:
      throw new InvalidQuery(`not a condition: ${JSON.stringify((cond as { t?: unknown }).t)}`);
  }
}
