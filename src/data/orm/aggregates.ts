/**
 * Aggregates for `select({...})`: count, sum, avg, min, max. Each knows its SQL and how to read its
 * result the same on both backends (Postgres answers count as int8 and avg/sum(int8) as numeric
 * text; SQLite as plain numbers).
 */
import type { Decoder } from './codec.js';
import type { ColumnRef } from './model.js';
import { decoderFor } from './types.js';
import type { Backend } from '../values.js';

export type AggregateFn = 'count' | 'sum' | 'avg' | 'min' | 'max';

export interface Aggregate<T> {
  readonly __aggregate: true;
  readonly fn: AggregateFn;
  readonly col?: ColumnRef;
  /** Phantom: the result type. */
  readonly __type?: T;
}

export function isAggregate(value: unknown): value is Aggregate<unknown> {
  return typeof value === 'object' && value !== null && (value as { __aggregate?: unknown }).__aggregate === true;
}

/** `count(*)`, or `count(col)` (non-null values): a number. */
export const count = (col?: ColumnRef): Aggregate<number> => (col === undefined ? { __aggregate: true, fn: 'count' } : { __aggregate: true, fn: 'count', col });
/** Sum in the column's own type (int64 → bigint); null over no rows. */
export const sum = <T extends number | bigint | null>(col: ColumnRef<T>): Aggregate<NonNullable<T> | null> => ({ __aggregate: true, fn: 'sum', col });
/** Average as a number; null over no rows. */
export const avg = (col: ColumnRef<number | bigint | null> | ColumnRef<number> | ColumnRef<bigint>): Aggregate<number | null> => ({ __aggregate: true, fn: 'avg', col });
export const min = <T>(col: ColumnRef<T>): Aggregate<NonNullable<T> | null> => ({ __aggregate: true, fn: 'min', col });
export const max = <T>(col: ColumnRef<T>): Aggregate<NonNullable<T> | null> => ({ __aggregate: true, fn: 'max', col });

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
