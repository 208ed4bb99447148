/**
 * Per-model code generated once: a row decoder and an insert encoder whose property names are
 * constants in the generated source. A generic loop reads `row[names[i]]` at one site with many
 * names, which V8 can only serve megamorphically; here each column gets its own site that sees one
 * name and one row layout, so a find or an insert costs little more than the driver call itself.
 *
 * Names (the model's column names, a query's aliases) enter the source only as JSON string
 * literals, so any name, quotes, backslashes and line breaks included, stays data; values never
 * enter it.
 */
import type { Row, Value } from '../values.js';
import type { ColumnMeta } from './model.js';
import { TYPE_MAPPING } from './types.js';

export type Decoder = (raw: unknown) => unknown;
/** Decodes one row in place. */
export type RowDecoder = (row: Row) => void;
/**
 * Appends the encoded values of the columns `values` gives (model order) to `params` and returns
 * their set as a shape key (a bitmask; positions past 30 appended as text).
 */
export type InsertEncoder = (values: Record<string, unknown>, params: Value[]) => string;

const literal = (name: string): string => JSON.stringify(name);

/** One decoding site per named column; `names[i]` is decoded by `decoders[i]` when not null. */
export function compileRowDecoder(names: readonly string[], decoders: readonly Decoder[]): RowDecoder {
  if (names.length === 0) return () => undefined;
  const body = names.map((name, i) => `v = r[${literal(name)}]; if (v !== null && v !== undefined) r[${literal(name)}] = d[${i}](v);`);
  return new Function('d', `return function decodeRow(r) { let v; ${body.join(' ')} };`)(decoders) as RowDecoder;
}

/**
 * The insert encoder of a model's columns. `version`, when given, is the version column that gets
 * `versionOne` when the values leave it out (a new row starts at version 1).
 */
export function compileInsertEncoder(columns: readonly ColumnMeta[], version: string | undefined, versionOne: bigint | number): InsertEncoder {
  // Each column's own encoder from the type table; NULL as encodeValue binds it (a non-nullable json column's null is the JSON `null`).
  const encoders = columns.map((col) => TYPE_MAPPING[col.kind].encode);
  const nulls = columns.map((col): Value => (col.kind === 'json' && !col.nullable ? 'null' : null));
  const lines: string[] = [];
  for (let i = 0; i < columns.length; i++) {
    const name = columns[i]!.name;
    const fill = name === version ? ' if (v === undefined) v = one;' : '';
    const mark = i < 30 ? `m |= ${1 << i};` : `w += ",${i}";`;
    lines.push(`v = values[${literal(name)}];${fill} if (v !== undefined) { params.push(v === null ? n[${i}] : x[${i}](v, ${literal(name)})); ${mark} }`);
  }
  const source = `return function encodeInsert(values, params) { let v; let m = 0; let w = ""; ${lines.join(' ')} return w === "" ? String(m) : String(m) + w; };`;
  return new Function('x', 'n', 'one', source)(encoders, nulls, versionOne) as InsertEncoder;
}

const shapeCache = new Map<string, RowDecoder>();
const decoderIds = new Map<Decoder, number>();
/** Compiled shapes kept at most: shapes come from the queries an application writes. */
const SHAPE_CACHE_MAX = 1_024;

/** The compiled decoder of an output shape, cached by its names and decoders (compiling is costlier than a query). */
export function shapeRowDecoder(names: readonly string[], decoders: readonly Decoder[]): RowDecoder {
  let key = '';
  for (let i = 0; i < names.length; i++) {
    let id = decoderIds.get(decoders[i]!);
    if (id === undefined) {
      // Decoders are module-level functions (the type table's, the aggregates'): a handful. Were one
      // ever made per call, past the cap its shapes compile uncached rather than grow the map.
      if (decoderIds.size >= SHAPE_CACHE_MAX) return compileRowDecoder(names, decoders);
      decoderIds.set(decoders[i]!, (id = decoderIds.size));
    }
    key += `${names[i]}\u0000${id}\u0000`;
  }
  let decoder = shapeCache.get(key);
  if (decoder === undefined) {
    decoder = compileRowDecoder(names, decoders);
    if (shapeCache.size < SHAPE_CACHE_MAX) shapeCache.set(key, decoder);
  }
  return decoder;
}
