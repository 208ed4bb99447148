/**
 * The per-model compiled encoder and decoder (src/data/orm/compiled.ts) against the generic
 * reference they replace (encodeValue / decoderFor column by column), for random column sets with
 * hostile names (quotes, backslashes, template and comment openers, line breaks): the generated
 * source holds names only as literals, so any name reads and writes its own property.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileInsertEncoder, compileRowDecoder, shapeRowDecoder } from '../../../src/data/orm/compiled.js';
import { FIELD_KINDS, type FieldKind } from '../../../src/data/orm/fields.js';
import type { ColumnMeta } from '../../../src/data/orm/model.js';
import { decoderFor, encodeValue } from '../../../src/data/orm/types.js';
import type { Row, Value } from '../../../src/data/values.js';

const name = fc.oneof(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/), fc.constantFrom('quo"te', 'back\\slash', '${x}', '*/ x', 'line\nbreak', "it's", '__proto__x', 'ünï'));
const column = fc.record({ name, kind: fc.constantFrom(...FIELD_KINDS), nullable: fc.boolean() });
const columns = fc.uniqueArray(column, { minLength: 1, maxLength: 34, selector: (c) => c.name });

function sample(kind: FieldKind, seed: number): unknown {
  switch (kind) {
    case 'int32':
      return seed;
    case 'int64':
      return BigInt(seed) * 1_000_003n;
    case 'double':
      return seed / 7;
    case 'string':
    case 'text':
      return `t${seed}`;
    case 'bytes':
      return Buffer.from([seed & 255]);
    case 'bool':
      return seed % 2 === 0;
    case 'time':
      return new Date(1_700_000_000_000 + seed);
    case 'json':
      return { n: seed };
    case 'uuid':
      return '0190A0B0-C0D0-7000-8000-00000000000' + String(seed % 10);
  }
}

const meta = (specs: readonly { name: string; kind: FieldKind; nullable: boolean }[]): ColumnMeta[] =>
  specs.map((s) => ({ ...s, unique: false, autoIncrement: false, primaryKey: false }));

describe('compiled ORM encoders and decoders', () => {
  it('encode an insert exactly as encodeValue column by column, with the same shape key', () => {
    fc.assert(
      fc.property(columns, fc.array(fc.constantFrom('value', 'null', 'absent'), { minLength: 34, maxLength: 34 }), fc.integer({ min: 0, max: 1_000 }), (specs, presence, seed) => {
        const cols = meta(specs);
        const values: Record<string, unknown> = {};
        cols.forEach((col, i) => {
          if (presence[i] === 'value') values[col.name] = sample(col.kind, seed + i);
          else if (presence[i] === 'null') values[col.name] = null;
        });
        const params: Value[] = [];
        const key = compileInsertEncoder(cols, undefined, 1)(values, params);
        const expected: Value[] = [];
        let mask = 0;
        let wide = '';
        cols.forEach((col, i) => {
          if (values[col.name] === undefined) return;
          expected.push(encodeValue(col.kind, values[col.name], col.name, col.nullable));
          if (i < 30) mask |= 1 << i;
          else wide += `,${i}`;
        });
        expect(params).toEqual(expected);
        expect(key).toBe(`${mask}${wide}`);
      }),
      { seed: 1_615, numRuns: 200 },
    );
  });

  it('fill the version column with 1 when the values leave it out', () => {
    const cols = meta([{ name: 'id', kind: 'int64', nullable: false }, { name: 'v"ersion', kind: 'int64', nullable: false }]);
    const params: Value[] = [];
    expect(compileInsertEncoder(cols, 'v"ersion', 1n)({ id: 5n }, params)).toBe('3');
    expect(params).toEqual([5n, 1n]);
  });

  it('decode rows exactly as the per-column decoders, on both backends', () => {
    fc.assert(
      fc.property(columns, fc.constantFrom('postgres' as const, 'sqlite' as const), fc.integer({ min: 0, max: 1_000 }), (specs, backend, seed) => {
        const names: string[] = [];
        const decoders: ((raw: unknown) => unknown)[] = [];
        const raw: Row = {};
        specs.forEach((spec, i) => {
          const decoder = decoderFor(backend, spec.kind);
          // What SQLite hands back for the kind: numbers for integers, text for times and JSON, 0/1 for booleans.
          raw[spec.name] = i % 5 === 0 ? null : spec.kind === 'json' ? JSON.stringify({ n: seed }) : spec.kind === 'time' ? new Date(seed).toISOString() : spec.kind === 'bool' ? seed % 2 : seed + i;
          if (decoder !== undefined) {
            names.push(spec.name);
            decoders.push(decoder);
          }
        });
        const expected: Row = { ...raw };
        names.forEach((n, i) => {
          if (expected[n] !== null && expected[n] !== undefined) expected[n] = decoders[i]!(expected[n]) as Row[string];
        });
        const compiled = { ...raw };
        compileRowDecoder(names, decoders)(compiled);
        expect(compiled).toEqual(expected);
        const shaped = { ...raw };
        shapeRowDecoder(names, decoders)(shaped);
        expect(shaped).toEqual(expected);
      }),
      { seed: 1_616, numRuns: 200 },
    );
  });
});
