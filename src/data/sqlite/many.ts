/**
 * The worker's side of `queryMany`: one statement over a packed run of rows, in one loop and one
 * reply, each row run exactly as a lone statement would be (deadline, busy retries, maxRows,
 * RETURNING), so the per-row cost is close to better-sqlite3's own. The first fault ends the op:
 * queryMany fails with it and its transaction rolls back, so later rows would be undone anyway.
 */
import type { Executor } from './executor.js';
import { isFault, type FaultReply, type ManyReply, type ParkedRows, type SqliteParam } from './protocol.js';
import { blobs } from './rows.js';

export function runMany(executor: Executor, sql: string, params: readonly SqliteParam[], counts: readonly number[], maxRows: number, deadline: number): ManyReply | FaultReply {
  const entry = executor.statementFor(sql);
  const size = counts.length;
  const affected = new Array<number>(size).fill(0);
  const insertIds = new Array<number>(size).fill(NaN);
  const bigIds: [number, bigint][] = [];
  const withBlobs: number[] = [];
  let values: (Record<string, unknown>[] | ParkedRows | undefined)[] | undefined;
  let first = 0;
  for (let j = 0; j < size; j++) {
    const count = counts[j]!;
    blobs.seen = false;
    let value: unknown;
    try {
      value = executor.query(entry, params, first, count, maxRows, deadline);
    } catch (error) {
      value = executor.fault(error);
    }
    first += count;
    if (value !== undefined) {
      if (isFault(value)) return value;
      (values ??= new Array(size))[j] = value as Record<string, unknown>[] | ParkedRows;
      if (blobs.seen) withBlobs.push(j);
    }
    affected[j] = executor.affected;
    const id = executor.lastInsertId;
    if (typeof id === 'bigint') bigIds.push([j, id]);
    else if (id !== null) insertIds[j] = id;
  }
  return { a: affected, i: insertIds, b: bigIds, v: values, y: withBlobs, c: entry.command, f: entry.columns ?? null };
}
