/**
 * Writes and reads of one row by its primary key: update and delete with optimistic locking (a
 * stale version is a ConflictError carrying the current one), and find.
 */
import { ConflictError, InvalidQuery, NotFound } from './errors.js';
import type { Row, Value } from '../values.js';
import { cachedSql, codecFor, decodeRows, encodeColumn, eventKey, pkParams, type ModelCodec } from './codec.js';
import { quoteIdent } from './dialect.js';
import { emit, exec, inTransaction, listening, type Scope } from './execute.js';
import type { AnyModel } from './model.js';
import { encodeValue } from './types.js';
import { recordWrites } from './write-oplog.js';
import { beforeSave, checkKeys, event, hookContext, needsOwnTx, ONE_ROW, type Values } from './write-common.js';

function conflict(scope: Scope, codec: ModelCodec, row: Values, expected: bigint | number, current: bigint | number | null): ConflictError {
  scope.shared.metrics?.conflicts.inc({ table: codec.meta.table });
  return new ConflictError(codec.meta.table, eventKey(codec, row), expected, current);
}

/** The row's stored version now, or null when it is gone (for the ConflictError). */
async function currentVersion(scope: Scope, codec: ModelCodec, key: Value[]): Promise<bigint | number | null> {
  const text = cachedSql(codec, 'v', () => `SELECT ${quoteIdent(codec.version!)} FROM ${codec.table} WHERE ${codec.pkWhere}`);
  const result = await exec(scope, codec.meta, text, key, { maxRows: 1 });
  const raw = result.rows[0]?.[codec.version!];
  if (raw === undefined || raw === null) return null;
  return decodeRows<Row>(codec, [{ [codec.version!]: raw }])[0]![codec.version!] as bigint | number;
}

/**
 * Updates one row by its primary key. With a versioned model the row must carry its version: the
 * update matches on it and increments it, and a stale one fails with ConflictError (current version).
 */
export async function updateRow(scope: Scope, model: AnyModel, row: Values, patch: Values | undefined): Promise<Row> {
  if (needsOwnTx(scope, model, 1)) return inTransaction(scope, (inner) => updateRow(inner, model, row, patch));
  const codec = codecFor(model, scope.shared.backend);
  const key = pkParams(codec, row);
  let expected: bigint | number | undefined;
  if (codec.version !== undefined) {
    const v = row[codec.version];
    if (typeof v !== 'bigint' && typeof v !== 'number') throw new InvalidQuery(`${codec.meta.table} is versioned: update needs the row's ${codec.version} (re-read the row)`);
    expected = v;
  }
  let values: Values = patch ?? withoutKeys(codec, row);
  values = await beforeSave(scope, model, values, 'update');
  checkKeys(codec, values);
  const params: Value[] = [];
  const sets: string[] = [];
  let mask = '';
  for (const col of codec.meta.columns) {
    const value = values[col.name];
    if (value === undefined || col.primaryKey || col.name === codec.version) continue;
    params.push(encodeValue(col.kind, value, col.name, col.nullable));
    sets.push(`${quoteIdent(col.name)} = $${params.length}`);
    mask += `${col.name},`;
  }
  if (sets.length === 0 && expected === undefined) throw new InvalidQuery(`${codec.meta.table}: nothing to update`);
  const first = params.length;
  for (const value of key) params.push(value);
  if (expected !== undefined) params.push(encodeColumn(codec, codec.version!, expected));
  const text = cachedSql(codec, `u:${mask}`, () => {
    const v = codec.version === undefined ? undefined : quoteIdent(codec.version);
    const setList = v === undefined ? sets : [...sets, `${v} = ${v} + 1`];
    const where = codec.pk.map((c, i) => `${quoteIdent(c)} = $${first + i + 1}`).join(' AND ');
    const versionMatch = v === undefined ? '' : ` AND ${v} = $${first + codec.pk.length + 1}`;
    return `UPDATE ${codec.table} SET ${setList.join(', ')} WHERE ${where}${versionMatch} RETURNING ${codec.selectList}`;
  });
  const result = await exec(scope, codec.meta, text, params, ONE_ROW);
  if (result.rows.length === 0) {
    if (expected !== undefined) throw conflict(scope, codec, row, expected, await currentVersion(scope, codec, key));
    throw new NotFound(codec.meta.table, eventKey(codec, row));
  }
  const updated = decodeRows<Row>(codec, result.rows)[0]!;
  await recordWrites(scope, model, codec, [updated], 'update');
  if (model.hooks.afterSave !== undefined) await model.hooks.afterSave(updated as never, hookContext(scope, 'update'));
  if (listening(scope)) emit(scope, [event(codec, updated, 'update')]);
  return updated;
}

function withoutKeys(codec: ModelCodec, row: Values): Values {
  const out: Values = {};
  for (const key in row) if (codec.columns.has(key) && !codec.pk.includes(key) && key !== codec.version) out[key] = row[key];
  return out;
}

/**
 * Deletes one row by its primary key; when the model is versioned and the row carries its version,
 * the delete matches on it (ConflictError when stale). Returns whether a row was deleted.
 */
export async function deleteRow(scope: Scope, model: AnyModel, row: Values): Promise<boolean> {
  if (needsOwnTx(scope, model, 1)) return inTransaction(scope, (inner) => deleteRow(inner, model, row));
  const codec = codecFor(model, scope.shared.backend);
  const key = pkParams(codec, row);
  const v = codec.version === undefined ? undefined : row[codec.version];
  const expected = typeof v === 'bigint' || typeof v === 'number' ? v : undefined;
  const params = expected === undefined ? key : [...key, encodeColumn(codec, codec.version!, expected)];
  const text = cachedSql(codec, expected === undefined ? 'd' : 'dv', () => {
    const versionMatch = expected === undefined ? '' : ` AND ${quoteIdent(codec.version!)} = $${codec.pk.length + 1}`;
    return `DELETE FROM ${codec.table} WHERE ${codec.pkWhere}${versionMatch} RETURNING ${codec.selectList}`;
  });
  const result = await exec(scope, codec.meta, text, params, ONE_ROW);
  if (result.rows.length === 0) {
    if (expected !== undefined) {
      const current = await currentVersion(scope, codec, key);
      if (current !== null) throw conflict(scope, codec, row, expected, current);
    }
    return false;
  }
  const deleted = decodeRows<Row>(codec, result.rows)[0]!;
  await recordWrites(scope, model, codec, [deleted], 'delete');
  if (model.hooks.afterDelete !== undefined) await model.hooks.afterDelete(deleted as never, hookContext(scope, 'delete'));
  if (listening(scope)) emit(scope, [event(codec, deleted, 'delete')]);
  return true;
}

/** The row with this primary key (a value, or an object/array for a composite key), or undefined. */
export function findByKey(scope: Scope, model: AnyModel, key: unknown): Promise<Row | undefined> {
  // Not async: one promise (`then` with the codec's own decoder) instead of an async frame per call.
  try {
    const codec = codecFor(model, scope.shared.backend);
    return exec(scope, codec.meta, codec.findSql, keyParams(codec, key), ONE_ROW).then(codec.first);
  } catch (error) {
    return Promise.reject(error);
  }
}

export function keyParams(codec: ModelCodec, key: unknown): Value[] {
  const single = codec.pkColumn;
  if (single !== undefined && (typeof key !== 'object' || key === null || key instanceof Date || Buffer.isBuffer(key))) {
    if (key === null || key === undefined) throw new InvalidQuery(`${codec.meta.table}: a primary key is needed`);
    return [encodeValue(single.kind, key, single.name)];
  }
  if (Array.isArray(key)) {
    if (key.length !== codec.pk.length) throw new InvalidQuery(`${codec.meta.table}: the primary key has ${codec.pk.length} columns, got ${key.length} values`);
    return codec.pk.map((c, i) => encodeColumn(codec, c, key[i]));
  }
  return pkParams(codec, key as Values);
}
