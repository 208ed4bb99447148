/**
 * Invalidation from writes: the ORM emits one event per written row on an in-process channel; a
 * cache subscribed to it drops the keys and tags each event maps to. The channel only needs
 * `subscribe(listener) → unsubscribe`, so any emitter fits (and tests use a plain one).
 *
 * Tag cached reads with `tableTag`/`rowTag` and the default mapping (`tableAndRowTags`) invalidates
 * them without a custom `keyFor`.
 */
import type { Value } from '../values.js';

export type WriteOp = 'insert' | 'update' | 'delete';

/** One written row, as the ORM emits it (after commit). */
export interface WriteEvent {
  readonly table: string;
  /** The row's primary key: its value, or an array of values for a composite key. */
  readonly primaryKey: Value;
  readonly op: WriteOp;
  /** The row's version after the write, when the model keeps one. */
  readonly version?: bigint | number | string | null;
  /** The writing transaction, for ordering and replication. */
  readonly txId?: bigint | number | string | null;
}

/** What an event invalidates: cache keys, tags, or both. */
export interface Invalidation {
  readonly keys?: readonly string[];
  readonly tags?: readonly string[];
}

/** An in-process event channel: `subscribe` returns the function that unsubscribes. */
export interface WriteEventSource<E = WriteEvent> {
  subscribe(listener: (event: E) => void): () => void;
}

/** The tag of every cached read that depends on `table` as a whole (lists, counts, joins). */
export function tableTag(table: string): string {
  return `table:${table}`;
}

/** The tag of cached reads of one row. */
export function rowTag(table: string, primaryKey: Value): string {
  return `row:${table}:${keyText(primaryKey)}`;
}

/**
 * The default mapping: an insert or delete changes the table's lists (its table tag); every write
 * changes its row (its row tag), and an update may change lists too, so it purges both.
 */
export function tableAndRowTags(event: WriteEvent): Invalidation {
  return { tags: [tableTag(event.table), rowTag(event.table, event.primaryKey)] };
}

/** A primary key as stable text: the same key always reads the same, whatever its JS type. */
function keyText(value: Value): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return `(${value.map((part: Value) => keyText(part)).join(',')})`;
  return JSON.stringify(value, (_key, inner: unknown) => (typeof inner === 'bigint' ? inner.toString() : inner));
}
