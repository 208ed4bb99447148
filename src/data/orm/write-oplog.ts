/**
 * The ORM's side of replication: a write to a model declaring `replicated` appends one oplog entry
 * per row it touched, on the writing transaction's connection, before that transaction commits
 * (every such write runs in a transaction: `needsOwnTx` says so). The after-commit write events
 * stay what they were: a local, in-memory view published once the entries are durable.
 */
import type { Row } from '../values.js';
import { eventKey, type ModelCodec } from './codec.js';
import type { WriteOp } from './events.js';
import type { Scope } from './execute.js';
import type { AnyModel } from './model.js';
import type { PendingEntry } from '../replication/oplog.js';

/** Whether writes of `model` in this scope append to an oplog. */
export function replicatedHere(scope: Scope, model: AnyModel): boolean {
  return model.replicated !== undefined && scope.shared.oplog !== undefined;
}

/** A primary key as the oplog's text: the value for one column, JSON of the values for several. */
export function keyText(codec: ModelCodec, row: Row): string {
  const key = eventKey(codec, row);
  if (codec.pk.length === 1) return scalarText(key);
  return JSON.stringify((key as unknown[]).map(scalarText));
}

function scalarText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return String(value);
}

/** Appends the entries of rows just written (inside `scope.tx`). */
export async function recordWrites(scope: Scope, model: AnyModel, codec: ModelCodec, rows: readonly Row[], op: WriteOp): Promise<void> {
  const oplog = scope.shared.oplog;
  if (oplog === undefined || model.replicated === undefined || rows.length === 0) return;
  const entries: PendingEntry[] = [];
  for (const row of rows) {
    const version = codec.version === undefined ? 0 : Number(row[codec.version] ?? 0);
    let data: Record<string, unknown>;
    if (op === 'delete') {
      // A delete carries its key columns, so the receiver can find the row without parsing text.
      data = {};
      for (const c of codec.pk) data[c] = row[c];
    } else data = { ...row };
    entries.push({ model: codec.meta.table, key: keyText(codec, row), op: op === 'delete' ? 'delete' : 'upsert', version, data });
  }
  await oplog.append(scope.q, entries, scope.ctx);
  scope.tx!.appended.n += entries.length;
}
