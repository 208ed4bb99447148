/**
 * Aggregates for `select({...})`: count, sum, avg, min, max. Each knows its SQL and how to read its
 * result the same on both backends (Postgres answers count as int8 and avg/sum(int8) as numeric
 * text; SQLite as plain numbers).
 */
import type { Decoder } from './codec.js';
import { InvalidQuery } from './errors.js';
import { isColumnRef, type ColumnRef } from './model.js';
import { decoderFor } from './types.js';
import type { Backend } from '../values.js';

export type AggregateFn = 'count' | 'sum' | 'avg' | 'min' | 'max';

/** The aggregate functions: the only function names an aggregate puts in SQL. */
const AGGREGATE_FNS: ReadonlySet<string> = new Set<AggregateFn>(['count', 'sum', 'avg', 'min', 'max']);

/** The brand of aggregates: module-private, so JSON cannot pass for one. */
const AGGREGATE = Symbol('molo.orm.aggregate');

export interface Aggregate<T> {
  readonly [AGGREGATE]: true;
  readonly fn: AggregateFn;
  readonly col?: ColumnRef;
  /** Phantom: the result type. */
  readonly __type?: T;
}

/** An aggregate made by count/sum/avg/min/max (an object of the same shape from JSON is not). */
export function isAggregate(value: unknown): value is Aggregate<unknown> {
  return typeof value === 'object' && value !== null && (value as Partial<Record<typeof AGGREGATE, unknown>>)[AGGREGATE] === true;
}

function make<T>(fn: AggregateFn, col: ColumnRef | undefined): Aggregate<T> {
  return Object.freeze(col === undefined ? { [AGGREGATE]: true, fn } : { [AGGREGATE]: true, fn, col }) as Aggregate<T>;
}

/** `fn(col)` or `count(*)`, after checking the function against the fixed list and the column's brand; `column` renders the column. */
export function aggregateSql(agg: Aggregate<unknown>, column: (col: ColumnRef) => string): string {
  if (!isAggregate(agg) || !AGGREGATE_FNS.has(agg.fn)) throw new InvalidQuery('not an aggregate (use count, sum, avg, min or max)');
  if (agg.col === undefined) {
    if (agg.fn !== 'count') throw new InvalidQuery(`${agg.fn}() needs a column`);
    return 'count(*)';
  }
  if (!isColumnRef(agg.col)) throw new InvalidQuery(`${agg.fn}(): not a column reference`);
  return `${agg.fn}(${column(agg.col)})`;
}

/** `count(*)`, or `count(col)` (non-null values): a number. */
export const count = (col?: ColumnRef): Aggregate<number> => make('count', col);
/** Sum in the column's own type (int64 → bigint); null over no rows. */
export const sum = <T extends number | bigint | null>(col: ColumnRef<T>): Aggregate<NonNullable<T> | null> => make('sum', col);
/** Average as a number; null over no rows. */
export const avg = (col: ColumnRef<number | bigint | null> | ColumnRef<number> | ColumnRef<bigint>): Aggregate<number | null> => make('avg', col);
export const min = <T>(col: ColumnRef<T>): Aggregate<NonNullable<T> | null> => make('min', col);
export const max = <T>(col: ColumnRef<T>): Aggregate<NonNullable<T> | null> => make('max', col);

const toNumber: Decoder = (raw) => Number(raw);
const toBigInt: Decoder = (raw) => (typeof raw === 'bigint' ? raw : BigInt(typeof raw === 'number' ? Math.trunc(raw) : String(raw)));

/** How an aggregate's result is read. */
export function aggregateDecoder(backend: Backend, agg: Aggregate<unknown>): Decoder | undefined {
  switch (agg.fn) {
    case 'count':
    case 'avg':
      return toNumber;
    case 'sum':
      return agg.col!.kind === 'int64' ? toBigInt : toNumber;
    case 'min':
    case 'max':
      return decoderFor(backend, agg.col!.kind);
  }
}
