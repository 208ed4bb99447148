/**
 * What the ORM precomputes once per (model, backend): quoted names, the select list, the per-column
 * decoders (only for the columns whose driver value needs converting), the primary-key helpers and
 * a cache of the SQL text of the statements it issues by shape (find by key, insert of a column set,
 * delete by key), so the hot path neither rebuilds SQL nor allocates closures per row.
 */
import { InvalidQuery } from './errors.js';
import type { Backend, Result, Row, Value } from '../values.js';
import { dialectFor, quoteIdent, type Dialect } from './dialect.js';
import type { FieldKind } from './fields.js';
import type { AnyModel, ColumnMeta, ModelMeta } from './model.js';
import { compileInsertEncoder, compileRowDecoder, shapeRowDecoder, type Decoder, type InsertEncoder, type RowDecoder } from './compiled.js';
import { decoderFor, encodeValue } from './types.js';

export type { Decoder } from './compiled.js';

export interface ModelCodec {
  readonly meta: ModelMeta;
  readonly backend: Backend;
  readonly dialect: Dialect;
  readonly table: string;
  /** `"id", "email", ...` */
  readonly selectList: string;
  readonly columns: ReadonlyMap<string, ColumnMeta>;
  readonly columnNames: readonly string[];
  /** Parallel arrays: the columns to decode and their decoders. */
  readonly decodeNames: readonly string[];
  readonly decoders: readonly Decoder[];
  /** The same decoding, compiled for this model's columns (compiled.ts). */
  readonly decodeRow: RowDecoder;
  /** Encodes an insert's values in model order and returns the shape key of its column set (compiled.ts). */
  readonly encodeInsert: InsertEncoder;
  readonly pk: readonly string[];
  /** `"id" = $1 AND "k2" = $2` with placeholders from 1. */
  readonly pkWhere: string;
  readonly version?: string;
  /** `SELECT <all> FROM t WHERE <pk>`, built once: the hottest statement. */
  readonly findSql: string;
  /** The primary key's single column when it has one (the fast path of key encoding). */
  readonly pkColumn?: ColumnMeta;
  /** SQL text by statement shape. Bounded: shapes come from column subsets of one model. */
  readonly sqlCache: Map<string, string>;
  /** Single-row INSERT text by column-set key (the hot path's own map, no key concatenation). */
  readonly insertSql: Map<string, string>;
  /** A result's first row, decoded (undefined when there is none): made once, passed to `then`. */
  readonly first: (result: Result) => Row | undefined;
}

const codecs = new WeakMap<AnyModel, { postgres?: ModelCodec; sqlite?: ModelCodec }>();
const SQL_CACHE_MAX = 512;

export function codecFor(model: AnyModel, backend: Backend): ModelCodec {
  let entry = codecs.get(model);
  if (entry === undefined) {
    entry = {};
    codecs.set(model, entry);
  }
  const existing = entry[backend];
  if (existing !== undefined) return existing;
  const built = buildCodec(model.meta, backend);
  entry[backend] = built;
  return built;
}

function buildCodec(meta: ModelMeta, backend: Backend): ModelCodec {
  const decodeNames: string[] = [];
  const decoders: Decoder[] = [];
  for (const col of meta.columns) {
    const decoder = decoderFor(backend, col.kind);
    if (decoder !== undefined) {
      decodeNames.push(col.name);
      decoders.push(decoder);
    }
  }
  const table = quoteIdent(meta.table);
  const selectList = meta.columns.map((c) => quoteIdent(c.name)).join(', ');
  const pkWhere = meta.primaryKey.map((c, i) => `${quoteIdent(c)} = $${i + 1}`).join(' AND ');
  const pkColumn = meta.primaryKey.length === 1 ? meta.columns.find((c) => c.name === meta.primaryKey[0]) : undefined;
  const codec: ModelCodec = {
    meta,
    backend,
    dialect: dialectFor(backend),
    table,
    selectList,
    findSql: `SELECT ${selectList} FROM ${table} WHERE ${pkWhere}`,
    ...(pkColumn === undefined ? {} : { pkColumn }),
    columns: new Map(meta.columns.map((c) => [c.name, c])),
    columnNames: meta.columns.map((c) => c.name),
    decodeNames,
    decoders,
    decodeRow: compileRowDecoder(decodeNames, decoders),
    encodeInsert: compileInsertEncoder(meta.columns, meta.versionColumn, meta.columns.find((c) => c.name === meta.versionColumn)?.kind === 'int64' ? 1n : 1),
    pk: meta.primaryKey,
    pkWhere,
    ...(meta.versionColumn === undefined ? {} : { version: meta.versionColumn }),
    sqlCache: new Map(),
    insertSql: new Map(),
    first: (result) => (result.rows.length === 0 ? undefined : decodeRows<Row>(codec, result.rows)[0]),
  };
  return codec;
}

/** The cached SQL for `key`, built by `build` the first time. */
export function cachedSql(codec: ModelCodec, key: string, build: () => string): string {
  const hit = codec.sqlCache.get(key);
  if (hit !== undefined) return hit;
  const text = build();
  if (codec.sqlCache.size < SQL_CACHE_MAX) codec.sqlCache.set(key, text);
  return text;
}

/** Decodes rows of the model in place (the driver's row objects are ours to change). */
export function decodeRows<R>(codec: ModelCodec, rows: Row[]): R[] {
  if (codec.decodeNames.length === 0) return rows as R[];
  const decodeRow = codec.decodeRow;
  for (let r = 0; r < rows.length; r++) decodeRow(rows[r]!);
  return rows as R[];
}

/** Decoders for an arbitrary output shape: alias → kind. */
export function shapeDecoders(backend: Backend, shape: readonly (readonly [string, FieldKind | Decoder | undefined])[]): { names: string[]; decoders: Decoder[] } {
  const names: string[] = [];
  const decoders: Decoder[] = [];
  for (const [alias, kind] of shape) {
    const decoder = typeof kind === 'function' ? kind : kind === undefined ? undefined : decoderFor(backend, kind);
    if (decoder !== undefined) {
      names.push(alias);
      decoders.push(decoder);
    }
  }
  return { names, decoders };
}

export function decodeShape(rows: Row[], names: readonly string[], decoders: readonly Decoder[]): void {
  if (names.length === 0 || rows.length === 0) return;
  const decodeRow = shapeRowDecoder(names, decoders);
  for (let r = 0; r < rows.length; r++) decodeRow(rows[r]!);
}

/** Encodes the value for a named column of the model; InvalidQuery for a column it does not have. */
export function encodeColumn(codec: ModelCodec, column: string, value: unknown): Value {
  const col = codec.columns.get(column);
  if (col === undefined) throw new InvalidQuery(`${codec.meta.table} has no column ${JSON.stringify(column)}`);
  return encodeValue(col.kind, value, column, col.nullable);
}

/** The primary key of a row as parameters, in key order; InvalidQuery when a part is missing. */
export function pkParams(codec: ModelCodec, row: Record<string, unknown>): Value[] {
  const params: Value[] = [];
  for (const column of codec.pk) {
    const value = row[column];
    if (value === undefined || value === null) throw new InvalidQuery(`${codec.meta.table}: primary key column ${column} is missing`);
    params.push(encodeColumn(codec, column, value));
  }
  return params;
}

/** The primary key as an event carries it: the value, or an array for a composite key. */
export function eventKey(codec: ModelCodec, row: Record<string, unknown>): Value {
  if (codec.pk.length === 1) return row[codec.pk[0]!] as Value;
  return codec.pk.map((c) => row[c] as Value);
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A map key for a value: integers as numbers when exact (so int32 and int64 keys meet, and Maps
 * hash numbers faster than bigints), Dates and Buffers as text, the rest as is.
 */
export function keyOf(value: unknown): unknown {
  if (typeof value === 'bigint') return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value;
  if (value instanceof Date) return `d:${value.getTime()}`;
  if (Buffer.isBuffer(value)) return `b:${value.toString('hex')}`;
  return value;
}
