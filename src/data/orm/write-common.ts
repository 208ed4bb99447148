/**
 * What the write modules share: hook calls, the own-transaction rule, write events, key checks,
 * RETURNING lists.
 */
import { InvalidQuery } from './errors.js';
import type { Row } from '../values.js';
import { eventKey, type ModelCodec } from './codec.js';
import { quoteIdent } from './dialect.js';
import type { PendingEvent, WriteOp } from './events.js';
import type { Scope } from './execute.js';
import type { AnyModel, HookContext } from './model.js';
import { replicatedHere } from './write-oplog.js';

export type Values = Record<string, unknown>;

/** Shared, never changed: options objects of the statements that read at most one row. */
export const ONE_ROW = { maxRows: 1 } as const;

export function hookContext(scope: Scope, op: HookContext['op']): HookContext {
  return { op, orm: scope.shared.facade(scope) };
}

/** Whether a write must run in its own transaction: more than one statement, outside a transaction. */
export function needsOwnTx(scope: Scope, model: AnyModel, statements: number): boolean {
  if (scope.tx !== undefined) return false;
  const hooks = model.hooks;
  return statements > 1 || replicatedHere(scope, model) || hooks.beforeSave !== undefined || hooks.afterSave !== undefined || hooks.afterDelete !== undefined;
}

export function versionOne(codec: ModelCodec): bigint | number {
  return codec.columns.get(codec.version!)!.kind === 'int64' ? 1n : 1;
}

export function event(codec: ModelCodec, row: Row, op: WriteOp): PendingEvent {
  const version = codec.version === undefined ? undefined : (row[codec.version] as bigint | number | undefined);
  return version === undefined ? { table: codec.meta.table, primaryKey: eventKey(codec, row), op } : { table: codec.meta.table, primaryKey: eventKey(codec, row), op, version };
}

export function checkKeys(codec: ModelCodec, values: Values): void {
  for (const key in values) {
    if (!codec.columns.has(key)) throw new InvalidQuery(`${codec.meta.table} has no column ${JSON.stringify(key)}`);
  }
}

export function returningList(codec: ModelCodec, full: boolean): string {
  if (full) return codec.selectList;
  const cols = codec.version === undefined ? codec.pk : [...codec.pk, codec.version];
  return cols.map((c) => quoteIdent(c)).join(', ');
}

export async function beforeSave(scope: Scope, model: AnyModel, values: Values, op: HookContext['op']): Promise<Values> {
  const hook = model.hooks.beforeSave;
  if (hook === undefined) return values;
  const copy = { ...values };
  const changed = await hook(copy, hookContext(scope, op));
  return (changed ?? copy) as Values;
}
