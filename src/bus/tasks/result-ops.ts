/**
 * What a handler hands back beside success or failure: its return value (stored with the ack, in
 * settle-ops) and its progress. Both are JSON text in the task's row, checked against their caps on
 * the way in whoever calls `settle` or `reportProgress`, so a caller of the public API cannot store
 * what a handler could not.
 */
import type { Queryable } from '../../data/index.js';
import { InvalidBusOption } from '../errors.js';
import type { JsonValue } from './envelope.js';
import { TASK_CAPS } from './envelope.js';
import type { TaskProgressUpdate, TaskSettlement } from './api.js';
import type { OpsContext } from './lease-ops.js';

/** Refuses a stored value that is not JSON text within its cap (the cap named in the error). */
export function checkStoredJson(option: 'result' | 'progress', json: unknown): void {
  const cap = option === 'result' ? TASK_CAPS.maxResultChars : TASK_CAPS.maxProgressChars;
  const name = option === 'result' ? 'tasks.maxResultChars' : 'tasks.maxProgressChars';
  if (typeof json !== 'string') throw new InvalidBusOption(`settle.${option}`, 'must be JSON text');
  if (json.length > cap) throw new InvalidBusOption(name, `${option} is ${json.length} characters of JSON, over ${cap}`);
  try {
    JSON.parse(json);
  } catch {
    throw new InvalidBusOption(`settle.${option}`, 'is not valid JSON');
  }
}

export function checkSettlementResults(settlements: readonly TaskSettlement[]): void {
  for (const { outcome } of settlements) if (outcome.kind === 'succeeded' && outcome.result !== undefined) checkStoredJson('result', outcome.result);
}

/** The latest update of each task, one UPDATE each, under the lease it was reported for. */
export async function writeProgress(db: Queryable, c: OpsContext, queue: string, updates: readonly TaskProgressUpdate[]): Promise<void> {
  const latest = new Map<string, TaskProgressUpdate>();
  for (const update of updates) {
    checkStoredJson('progress', update.progress);
    latest.set(update.id, update);
  }
  for (const { id, leaseToken, progress } of latest.values()) {
    await db.query(c.sql(`UPDATE ${c.tables.tasks} SET progress = $3::text WHERE queue = $1::text AND id = $2::text AND lease_token = $4::int8`), [
      queue,
      id,
      progress,
      leaseToken,
    ]);
  }
}

/** Characters of result or progress that multi-row reads return inline; longer ones are read row by row. */
export const RETURN_VALUE_CHARS = 512;

/** The columns reads select for them: inline when short, with their length to tell "none" from "long". */
export const VALUE_COLUMNS = `CASE WHEN length(result) <= ${RETURN_VALUE_CHARS} THEN result END AS result, length(result) AS result_chars,
  CASE WHEN length(progress) <= ${RETURN_VALUE_CHARS} THEN progress END AS progress, length(progress) AS progress_chars`;

/** Reads, one row at a time, the values a multi-row read left out for their length. */
export async function hydrateValues(db: Queryable, c: OpsContext, rows: readonly Record<string, unknown>[]): Promise<void> {
  for (const row of rows) {
    for (const column of ['result', 'progress'] as const) {
      if (row[column] !== null && row[column] !== undefined) continue;
      const chars = row[`${column}_chars`];
      if (chars === null || chars === undefined) continue;
      const { rows: found } = await db.query(c.sql(`SELECT ${column} FROM ${c.tables.tasks} WHERE id = $1::text`), [String(row.id)]);
      row[column] = found[0]?.[column] ?? null;
    }
  }
}

/** `result` and `progress` of a read row, parsed, for a TaskRecord. */
export function valuesOf(row: Record<string, unknown>): { result?: JsonValue; progress?: JsonValue } {
  const values: { result?: JsonValue; progress?: JsonValue } = {};
  if (typeof row.result === 'string') values.result = JSON.parse(row.result) as JsonValue;
  if (typeof row.progress === 'string') values.progress = JSON.parse(row.progress) as JsonValue;
  return values;
}
