/**
 * The worker's side of `queryMany`: one statement over a packed run of rows, in one loop and one
 * reply, each row run as a lone statement would be (deadline, busy retries, maxRows, RETURNING),
 * so the per-row cost is close to better-sqlite3's own. The first fault ends the op: queryMany
 * fails with it and its transaction rolls back, so later rows would be undone anyway.
 */
import { Args } from './args.js';
import { isBusy, type Executor } from './executor.js';
import { RowReader, TYPED_FROM_ROWS, type PackedRows } from './packed-rows.js';
import { isFault, type FaultReply, type ManyReply, type ManyTotalsReply, type ParkedRows, type SqliteParam } from './protocol.js';
import { blobs, fromInteger } from './rows.js';

/**
 * A write without RETURNING runs straight through better-sqlite3 (no per-row checks beyond the
 * bind) except every this many rows, which run the full way: that checks the deadline.
 */
const CHECK_EVERY_ROWS = 256;

/** `totals`: the reply is the rows' summed affected count alone, and rows they return are dropped. */
export function runMany(executor: Executor, sql: string, packed: PackedRows, maxRows: number, deadline: number, totals: boolean): ManyReply | ManyTotalsReply | FaultReply {
  const entry = executor.statementFor(sql);
  const { stmt, counts: countsChanges, inserts } = entry;
  const counts = packed.c;
  const size = counts.length;
  // Filled in order, so a plain array stays packed (a holey one is cloned element by element).
  const typed = size >= TYPED_FROM_ROWS && !totals;
  const affected = typed ? new Float64Array(size) : [];
  const insertIds = typed ? new Float64Array(size) : [];
  let sum = 0;
  const bigIds: [number, bigint][] = [];
  const withBlobs: number[] = [];
  let values: (Record<string, unknown>[] | ParkedRows | undefined)[] | undefined;
  const reader = new RowReader(packed);
  const params: SqliteParam[] = [];
  for (let j = 0; j < size; j++) {
    const count = counts[j]!;
    reader.next(params, count);
    let id: number | bigint | null = null;
    // Decided after the first row ran the full way: by then `numbered` is known.
    const direct = j % CHECK_EVERY_ROWS !== 0 && !entry.reader && !entry.numbered;
    let ran = false;
    if (direct) {
      try {
        const info = new Args(params, 0, count).run(stmt, false);
        ran = true;
        if (totals) {
          if (countsChanges) sum += info.changes;
          continue;
        }
        affected[j] = countsChanges ? info.changes : 0;
        if (inserts) id = fromInteger(info.lastInsertRowid);
      } catch (error) {
        // A busy statement did nothing: the full way below retries it. Anything else ends the op.
        if (!isBusy(error)) return executor.fault(error);
      }
    }
    if (!ran) {
      blobs.seen = false;
      let value: unknown;
      try {
        value = executor.query(entry, params, 0, count, maxRows, deadline);
      } catch (error) {
        value = executor.fault(error);
      }
      if (value !== undefined) {
        if (isFault(value)) return value;
        if (totals) dropParked(executor, value as Record<string, unknown>[] | ParkedRows);
        else {
          (values ??= new Array(size))[j] = value as Record<string, unknown>[] | ParkedRows;
          if (blobs.seen) withBlobs.push(j);
        }
      }
      if (totals) {
        sum += executor.affected;
        continue;
      }
      affected[j] = executor.affected;
      id = executor.lastInsertId;
    }
    if (typeof id === 'bigint') bigIds.push([j, id]);
    insertIds[j] = typeof id === 'number' ? id : NaN;
  }
  if (totals) return { r: size, t: sum };
  return { a: affected, i: insertIds, b: bigIds, v: values, y: withBlobs, c: entry.command, f: entry.columns ?? null };
}

/** Rows parked for being too large for the reply, fetched here and dropped, so none stay parked. */
function dropParked(executor: Executor, value: Record<string, unknown>[] | ParkedRows): void {
  if (Array.isArray(value)) return;
  for (let more = executor.more(value.parked); !isFault(more) && more.p !== undefined; ) more = executor.more(more.p);
}
