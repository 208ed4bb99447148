/**
 * Bulk update and delete of the rows a query matches, with hooks and write events. Versioned
 * models have every touched version incremented.
 */
import { InvalidQuery } from './errors.js';
import type { Row, Value } from '../values.js';
import { codecFor, decodeRows } from './codec.js';
import { quoteIdent } from './dialect.js';
import { emit, exec, inTransaction, listening, type Scope } from './execute.js';
import type { AnyModel } from './model.js';
import { encodeValue } from './types.js';
import { recordWrites, replicatedHere } from './write-oplog.js';
import { beforeSave, checkKeys, event, hookContext, needsOwnTx, returningList, type Values } from './write-common.js';

/** Keys of rows a bulk write may report for its events (the driver's ceiling; keys only, so bounded memory). */
const MAX_EVENT_KEYS = 1_000_000;

/**
 * How a bulk write reads back what it touched: whole rows (asked for, or for hooks: capped at the
 * all() cap), keys only (for events), or nothing (the count). Reading back runs in a transaction,
 * so a result over its cap rolls the write back rather than leaving it half-reported.
 */
function bulkReturning(scope: Scope, model: AnyModel, returning: boolean, hook: unknown): { list: string | undefined; full: boolean; maxRows: number } {
  const codec = codecFor(model, scope.shared.backend);
  const full = returning || hook !== undefined || replicatedHere(scope, model);
  if (full) return { list: returningList(codec, true), full, maxRows: scope.shared.maxRows };
  if (listening(scope)) return { list: returningList(codec, false), full, maxRows: MAX_EVENT_KEYS };
  return { list: undefined, full, maxRows: 0 };
}

/** UPDATE of every row a query matches; returns the rows (RETURNING) or their count. */
export async function updateWhere(
  scope: Scope,
  model: AnyModel,
  patch: Values,
  compileWhere: (params: Value[]) => string | undefined,
  returning: boolean,
): Promise<Row[] | number> {
  const back = bulkReturning(scope, model, returning, model.hooks.afterSave);
  if (scope.tx === undefined && (needsOwnTx(scope, model, 1) || back.list !== undefined)) {
    return inTransaction(scope, (inner) => updateWhere(inner, model, patch, compileWhere, returning));
  }
  const codec = codecFor(model, scope.shared.backend);
  const values = await beforeSave(scope, model, patch, 'update');
  checkKeys(codec, values);
  const params: Value[] = [];
  const sets: string[] = [];
  for (const col of codec.meta.columns) {
    const value = values[col.name];
    if (value === undefined || col.name === codec.version) continue;
    params.push(encodeValue(col.kind, value, col.name, col.nullable));
    sets.push(`${quoteIdent(col.name)} = $${params.length}`);
  }
  if (sets.length === 0) throw new InvalidQuery(`${codec.meta.table}: nothing to update`);
  if (codec.version !== undefined) sets.push(`${quoteIdent(codec.version)} = ${quoteIdent(codec.version)} + 1`);
  const where = compileWhere(params);
  const text = `UPDATE ${codec.table} SET ${sets.join(', ')}${where === undefined ? '' : ` WHERE ${where}`}${back.list === undefined ? '' : ` RETURNING ${back.list}`}`;
  const result = await exec(scope, codec.meta, text, params, back.list === undefined ? undefined : { maxRows: back.maxRows });
  if (back.list === undefined) return result.affected;
  const rows = decodeRows<Row>(codec, result.rows);
  await recordWrites(scope, model, codec, rows, 'update');
  if (model.hooks.afterSave !== undefined) for (const row of rows) await model.hooks.afterSave(row as never, hookContext(scope, 'update'));
  if (listening(scope)) emit(scope, rows.map((row) => event(codec, row, 'update')));
  return returning ? rows : rows.length;
}

/** DELETE of every row a query matches; returns the rows (RETURNING) or their count. */
export async function deleteWhere(scope: Scope, model: AnyModel, compileWhere: (params: Value[]) => string | undefined, returning: boolean): Promise<Row[] | number> {
  const back = bulkReturning(scope, model, returning, model.hooks.afterDelete);
  if (scope.tx === undefined && (needsOwnTx(scope, model, 1) || back.list !== undefined)) {
    return inTransaction(scope, (inner) => deleteWhere(inner, model, compileWhere, returning));
  }
  const codec = codecFor(model, scope.shared.backend);
  const params: Value[] = [];
  const where = compileWhere(params);
  const text = `DELETE FROM ${codec.table}${where === undefined ? '' : ` WHERE ${where}`}${back.list === undefined ? '' : ` RETURNING ${back.list}`}`;
  const result = await exec(scope, codec.meta, text, params, back.list === undefined ? undefined : { maxRows: back.maxRows });
  if (back.list === undefined) return result.affected;
  const rows = decodeRows<Row>(codec, result.rows);
  await recordWrites(scope, model, codec, rows, 'delete');
  if (model.hooks.afterDelete !== undefined) for (const row of rows) await model.hooks.afterDelete(row as never, hookContext(scope, 'delete'));
  if (listening(scope)) emit(scope, rows.map((row) => event(codec, row, 'delete')));
  return returning ? rows : rows.length;
}
