/**
 * Inserts: one row, or many chunked under the 1,024-parameter cap, and upsert (ON CONFLICT on both
 * backends), with hooks, RETURNING and the write events they record. Updates and deletes by key are
 * in write-key.ts, bulk ones in write-bulk.ts, what they share in write-common.ts.
 *
 * A write that takes more than one statement (a chunked batch, hooks, SQLite's upsert probe) runs
 * in a transaction of its own when the caller is not in one, so it commits or fails as a whole.
 */
import { MAX_PARAMETERS } from '../database.js';
import { InvalidQuery } from './errors.js';
import type { Row, Value } from '../values.js';
import { cachedSql, codecFor, decodeRows, encodeColumn, type ModelCodec } from './codec.js';
import { quoteIdent } from './dialect.js';
import type { PendingEvent, WriteOp } from './events.js';
import { emit, exec, inTransaction, listening, type Scope } from './execute.js';
import type { AnyModel } from './model.js';
import { recordWrites, replicatedHere } from './write-oplog.js';
import { beforeSave, checkKeys, event, hookContext, needsOwnTx, ONE_ROW, returningList, type Values } from './write-common.js';

export interface InsertManyOptions {
  /** Return the written rows (default) or only their count. */
  readonly returning?: boolean;
}

export interface UpsertOptions {
  /** The conflict target: columns of the primary key (default) or of a unique constraint. */
  readonly target?: readonly string[];
  /** Columns to overwrite on conflict (default: every inserted column outside the target). */
  readonly update?: readonly string[];
}

/**
 * The encoded values of the columns present in `values` (in model order; the version set to 1 when
 * absent) and the shape key of that column set: a bitmask, plus the positions past 30 as text.
 * The model's compiled encoder does the work (compiled.ts).
 */
function insertColumns(codec: ModelCodec, values: Values): { params: Value[]; key: string } {
  checkKeys(codec, values);
  const params: Value[] = [];
  const key = codec.encodeInsert(values, params);
  return { params, key };
}

/** The column names a shape key stands for. */
function namesOf(codec: ModelCodec, key: string): string[] {
  const [maskText, ...wide] = key.split(',');
  const mask = Number(maskText);
  const cols = codec.meta.columns;
  const names: string[] = [];
  for (let i = 0; i < Math.min(cols.length, 30); i++) if ((mask & (1 << i)) !== 0) names.push(cols[i]!.name);
  for (const index of wide) names.push(cols[Number(index)]!.name);
  return names;
}

function valuesSql(rows: number, width: number): string {
  const groups: string[] = [];
  let n = 1;
  for (let r = 0; r < rows; r++) {
    const slots: string[] = [];
    for (let c = 0; c < width; c++) slots.push(`$${n++}`);
    groups.push(`(${slots.join(', ')})`);
  }
  return groups.join(', ');
}

function insertSql(codec: ModelCodec, names: readonly string[], rows: number, full: boolean): string {
  if (names.length === 0) return `INSERT INTO ${codec.table} DEFAULT VALUES RETURNING ${returningList(codec, full)}`;
  return `INSERT INTO ${codec.table} (${names.map((c) => quoteIdent(c)).join(', ')}) VALUES ${valuesSql(rows, names.length)} RETURNING ${returningList(codec, full)}`;
}

function singleInsertSql(codec: ModelCodec, key: string): string {
  let text = codec.insertSql.get(key);
  if (text === undefined) {
    text = insertSql(codec, namesOf(codec, key), 1, true);
    if (codec.insertSql.size < 512) codec.insertSql.set(key, text);
  }
  return text;
}

export function insertOne(scope: Scope, model: AnyModel, input: Values): Promise<Row> {
  const hooks = model.hooks;
  if (hooks.beforeSave !== undefined || hooks.afterSave !== undefined || replicatedHere(scope, model)) return insertWithHooks(scope, model, input);
  // The hot path: no async frame, the codec's decoder as the continuation, events only when listened to.
  try {
    const codec = codecFor(model, scope.shared.backend);
    const { params, key } = insertColumns(codec, input);
    const inserted = exec(scope, codec.meta, singleInsertSql(codec, key), params).then(codec.first) as Promise<Row>;
    if (!listening(scope)) return inserted;
    return inserted.then((row) => {
      emit(scope, [event(codec, row, 'insert')]);
      return row;
    });
  } catch (error) {
    return Promise.reject(error);
  }
}

async function insertWithHooks(scope: Scope, model: AnyModel, input: Values): Promise<Row> {
  if (needsOwnTx(scope, model, 1)) return inTransaction(scope, (inner) => insertWithHooks(inner, model, input));
  const codec = codecFor(model, scope.shared.backend);
  const values = await beforeSave(scope, model, input, 'insert');
  const { params, key } = insertColumns(codec, values);
  const result = await exec(scope, codec.meta, singleInsertSql(codec, key), params);
  const row = decodeRows<Row>(codec, result.rows)[0]!;
  await recordWrites(scope, model, codec, [row], 'insert');
  if (model.hooks.afterSave !== undefined) await model.hooks.afterSave(row as never, hookContext(scope, 'insert'));
  if (listening(scope)) emit(scope, [event(codec, row, 'insert')]);
  return row;
}

/**
 * Inserts rows in as few statements as the parameter cap allows: rows are grouped by the set of
 * columns they give, and each group is cut into chunks of ⌊1024 / columns⌋ rows.
 */
export async function insertMany(scope: Scope, model: AnyModel, inputs: readonly Values[], options: InsertManyOptions = {}): Promise<Row[] | number> {
  // A replicated model needs the written rows for its entries, whatever the caller asked back.
  const asked = options.returning !== false;
  const full = asked || replicatedHere(scope, model);
  if (!asked && full) return ((await insertMany(scope, model, inputs, { returning: true })) as Row[]).length;
  if (inputs.length === 0) return full ? [] : 0;
  const codec = codecFor(model, scope.shared.backend);
  const groups: Group[] = [];
  const prepared: Values[] = [];
  for (const input of inputs) prepared.push(model.hooks.beforeSave === undefined ? input : await beforeSave(scope, model, input, 'insert'));
  // Consecutive rows giving the same columns share statements; a change of columns starts a new
  // group, so rows are written (and ids assigned) in the caller's order.
  for (let index = 0; index < prepared.length; index++) {
    const { params, key } = insertColumns(codec, prepared[index]!);
    let group = groups[groups.length - 1];
    if (group === undefined || group.key !== key) groups.push((group = { key, names: namesOf(codec, key), rows: [] }));
    group.rows.push({ index, params });
  }
  let statements = 0;
  for (const group of groups) statements += group.names.length === 0 ? group.rows.length : Math.ceil(group.rows.length / chunkRows(group.names.length));
  if (needsOwnTx(scope, model, statements)) return inTransaction(scope, (inner) => insertPrepared(inner, model, codec, groups, prepared.length, full));
  return insertPrepared(scope, model, codec, groups, prepared.length, full);
}

interface Group {
  readonly key: string;
  readonly names: string[];
  readonly rows: { index: number; params: Value[] }[];
}

function chunkRows(width: number): number {
  return Math.max(1, Math.floor(MAX_PARAMETERS / width));
}

async function insertPrepared(
  scope: Scope,
  model: AnyModel,
  codec: ModelCodec,
  groups: readonly Group[],
  count: number,
  full: boolean,
): Promise<Row[] | number> {
  const out: Row[] = full ? new Array<Row>(count) : [];
  const events: PendingEvent[] = [];
  let written = 0;
  for (const group of groups) {
    const key = group.key;
    const per = group.names.length === 0 ? 1 : chunkRows(group.names.length);
    for (let start = 0; start < group.rows.length; start += per) {
      const chunk = group.rows.slice(start, start + per);
      const text = cachedSql(codec, `m:${key}:${chunk.length}:${full ? 1 : 0}`, () => insertSql(codec, group.names, chunk.length, full));
      const params: Value[] = [];
      for (const row of chunk) for (const value of row.params) params.push(value);
      const result = await exec(scope, codec.meta, text, params, { maxRows: chunk.length });
      const rows = inInsertOrder(codec, result.rows, chunk.length);
      if (full) decodeRows(codec, rows);
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        if (full) out[chunk[i]!.index] = row;
        else if (listening(scope)) events.push(event(codec, decodeRows<Row>(codec, [row])[0]!, 'insert'));
      }
      written += rows.length;
    }
  }
  if (full) await recordWrites(scope, model, codec, out, 'insert');
  if (full && model.hooks.afterSave !== undefined) for (const row of out) await model.hooks.afterSave(row as never, hookContext(scope, 'insert'));
  // With rows at hand, events follow the caller's row order whatever the grouping.
  if (listening(scope)) emit(scope, full ? out.map((row) => event(codec, row, 'insert')) : events);
  return full ? out : written;
}

/**
 * RETURNING rows in the order the VALUES listed them. Postgres returns them so; SQLite documents
 * RETURNING order as arbitrary, so there rows with an auto-increment key (assigned in insertion
 * order) are sorted by it.
 */
function inInsertOrder(codec: ModelCodec, rows: Row[], expected: number): Row[] {
  if (rows.length !== expected) throw new InvalidQuery(`${codec.meta.table}: insert returned ${rows.length} rows for ${expected}`);
  if (codec.backend !== 'sqlite' || rows.length < 2 || codec.pk.length !== 1) return rows;
  const pk = codec.pk[0]!;
  if (!codec.columns.get(pk)!.autoIncrement) return rows;
  for (let i = 1; i < rows.length; i++) {
    if ((rows[i - 1]![pk] as number) > (rows[i]![pk] as number)) return [...rows].sort((a, b) => ((a[pk] as number) < (b[pk] as number) ? -1 : 1));
  }
  return rows;
}

/**
 * INSERT ... ON CONFLICT (target) DO UPDATE SET ... RETURNING: the row as it is now. The write event
 * says whether it inserted or updated: Postgres tells through `xmax = 0` (a fresh tuple); SQLite
 * cannot tell from RETURNING, so it probes for the target first inside the same (immediate,
 * write-locked) transaction.
 */
export async function upsertRow(scope: Scope, model: AnyModel, input: Values, options: UpsertOptions = {}): Promise<Row> {
  const sqliteProbe = scope.shared.backend === 'sqlite';
  if (needsOwnTx(scope, model, sqliteProbe ? 2 : 1)) return inTransaction(scope, (inner) => upsertRow(inner, model, input, options));
  const codec = codecFor(model, scope.shared.backend);
  const values = await beforeSave(scope, model, input, 'upsert');
  const target = options.target ?? codec.pk;
  if (target.length === 0) throw new InvalidQuery('upsert needs a conflict target');
  for (const column of target) {
    if (!codec.columns.has(column)) throw new InvalidQuery(`${codec.meta.table} has no column ${JSON.stringify(column)}`);
    if (values[column] === undefined) throw new InvalidQuery(`${codec.meta.table}: upsert target column ${column} needs a value`);
  }
  const { params, key } = insertColumns(codec, values);
  const names = namesOf(codec, key);
  const updates = (options.update ?? names).filter((c) => !target.includes(c) && c !== codec.version && !codec.pk.includes(c));
  for (const column of updates) if (!names.includes(column)) throw new InvalidQuery(`${codec.meta.table}: upsert updates ${column}, which the values do not give`);
  const v = codec.version === undefined ? undefined : quoteIdent(codec.version);
  const sets = updates.map((c) => `${quoteIdent(c)} = excluded.${quoteIdent(c)}`);
  if (v !== undefined) sets.push(`${v} = ${codec.table}.${v} + 1`);
  // Nothing to change: a no-op assignment still makes RETURNING give the existing row.
  if (sets.length === 0) sets.push(`${quoteIdent(target[0]!)} = excluded.${quoteIdent(target[0]!)}`);
  const fresh = '"__molo_inserted"';
  const returning = scope.shared.backend === 'postgres' ? `${codec.selectList}, (xmax = 0) AS ${fresh}` : codec.selectList;
  const text = `INSERT INTO ${codec.table} (${names.map((c) => quoteIdent(c)).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (${target.map((c) => quoteIdent(c)).join(', ')}) DO UPDATE SET ${sets.join(', ')} RETURNING ${returning}`;
  let existed = false;
  if (sqliteProbe) {
    const probeParams = target.map((c) => encodeColumn(codec, c, values[c]));
    const probe = await exec(scope, codec.meta, `SELECT 1 AS x FROM ${codec.table} WHERE ${target.map((c, i) => `${quoteIdent(c)} = $${i + 1}`).join(' AND ')} LIMIT 1`, probeParams);
    existed = probe.rows.length > 0;
  }
  const result = await exec(scope, codec.meta, text, params, ONE_ROW);
  const raw = result.rows[0]!;
  let op: WriteOp;
  if (scope.shared.backend === 'postgres') {
    op = raw.__molo_inserted === true ? 'insert' : 'update';
    delete raw.__molo_inserted;
  } else op = existed ? 'update' : 'insert';
  const row = decodeRows<Row>(codec, [raw])[0]!;
  await recordWrites(scope, model, codec, [row], op);
  if (model.hooks.afterSave !== undefined) await model.hooks.afterSave(row as never, hookContext(scope, op));
  if (listening(scope)) emit(scope, [event(codec, row, op)]);
  return row;
}
