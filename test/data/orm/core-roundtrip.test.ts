/**
 * Property: random model schemas (every field kind, nullable or not, awkward column names) and
 * random rows round-trip through CREATE TABLE (the dialect's createTableSql), insert and select on
 * both backends, reading back exactly what was written (as the type mapping promises) and the same
 * rows from Postgres and SQLite. fast-check with a fixed seed.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { EncodeFailed } from '../../../src/data/index.js';
import { defineModel, field, Orm, type AnyField, type FieldKind, type Fields } from '../../../src/data/orm/index.js';
import { testSystem } from '../../support/systems.js';
import { BACKENDS, type OpenedBackend } from '../backends.js';

const KINDS: FieldKind[] = ['int32', 'int64', 'double', 'string', 'text', 'bytes', 'bool', 'time', 'json', 'uuid'];
const PG_SYSTEM = new Set(['xmin', 'xmax', 'cmin', 'cmax', 'ctid', 'tableoid', 'oid', 'id']);

const columnName = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/),
  fc.constantFrom('select', 'order', 'Mixed Case', 'quo"te', "it's", 'ünïcødé', 'a b', 'x;drop', 'group'),
);

interface ColumnSpec {
  readonly name: string;
  readonly kind: FieldKind;
  readonly nullable: boolean;
  readonly length: number;
}

const columnSpec = fc.record({ name: columnName, kind: fc.constantFrom(...KINDS), nullable: fc.boolean(), length: fc.integer({ min: 1, max: 40 }) });
const schema = fc.uniqueArray(columnSpec, { minLength: 1, maxLength: 7, selector: (c) => c.name.toLowerCase() }).filter((cols) => cols.every((c) => !PG_SYSTEM.has(c.name.toLowerCase())));

const text = (maxLength: number) => fc.string({ unit: 'grapheme', maxLength }).filter((s) => !s.includes('\0') && s.length <= maxLength);

function valueOf(col: ColumnSpec): fc.Arbitrary<unknown> {
  let base: fc.Arbitrary<unknown>;
  switch (col.kind) {
    case 'int32':
      base = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
      break;
    case 'int64':
      base = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
      break;
    case 'double':
      base = fc.double({ noNaN: true }).map((d) => (d === 0 ? 0 : d));
      break;
    case 'string':
      base = text(col.length);
      break;
    case 'text':
      base = text(200);
      break;
    case 'bytes':
      base = fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a));
      break;
    case 'bool':
      base = fc.boolean();
      break;
    case 'time':
      base = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true });
      break;
    case 'json':
      // What JSON promises: the value as JSON.parse(JSON.stringify(v)) sees it; no \u0000 (jsonb refuses it).
      base = fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v).includes('\\u0000')).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
      break;
    case 'uuid':
      base = fc.uuid();
      break;
  }
  return col.nullable ? fc.option(base, { nil: null }) : base;
}

function fieldOf(col: ColumnSpec): AnyField {
  const f: AnyField = col.kind === 'string' ? field.string(col.length) : (field[col.kind] as () => AnyField)();
  return col.nullable ? f.nullable() : f;
}

const scenario = schema.chain((cols) => fc.tuple(fc.constant(cols), fc.array(fc.tuple(...cols.map(valueOf)), { minLength: 1, maxLength: 6 })));

describe('ORM round-trip property (both backends)', () => {
  let system: ActorSystem;
  let opened: OpenedBackend[];
  let orms: Orm[];

  beforeEach(async () => {
    system = testSystem();
    opened = [];
    orms = [];
    for (const backend of BACKENDS) {
      const o = await backend.open(system);
      opened.push(o);
      orms.push(new Orm(o.db));
    }
  });

  afterEach(async () => {
    for (const o of opened) await o.dispose();
    await system.shutdown();
  });

  it('random schemas and rows read back identically on Postgres and SQLite', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ([cols, tuples]) => {
        const fields: Fields = { id: field.int64().primaryKey() };
        for (const col of cols) fields[col.name] = fieldOf(col);
        const Model = defineModel(`prop_${n++}`, fields);
        const rows = tuples.map((values, i) => {
          const row: Record<string, unknown> = { id: BigInt(i + 1) };
          cols.forEach((col, j) => (row[col.name] = values[j]));
          return row;
        });
        const read: unknown[][] = [];
        for (const orm of orms) {
          for (const statement of orm.dialect.createTableStatements(Model.meta)) await orm.db.query(statement);
          // The first row alone, the rest as a batch: both paths encode the same way.
          await orm.insert(Model, rows[0] as never);
          if (rows.length > 1) await orm.insertMany(Model, rows.slice(1) as never);
          const back = await orm.query(Model).orderBy('id').all();
          expect(back).toEqual(rows);
          expect(await orm.find(Model, 1n)).toEqual(rows[0]);
          read.push(back);
        }
        expect(read[0]).toEqual(read[1]);
      }),
      { seed: 42, numRuns: 25 },
    );
  });

  it('refuses values the backends would change: NUL, lone surrogates, NaN, out-of-range years', async () => {
    const Odd = defineModel('odd', { id: field.int32().primaryKey(), t: field.text().nullable(), d: field.double().nullable(), at: field.time().nullable() });
    for (const orm of orms) {
      await orm.createTables(Odd);
      await expect(orm.insert(Odd, { id: 1, t: 'a\0b' })).rejects.toBeInstanceOf(EncodeFailed);
      await expect(orm.insert(Odd, { id: 1, t: 'x\ud800' })).rejects.toBeInstanceOf(EncodeFailed);
      await expect(orm.insert(Odd, { id: 1, d: Number.NaN })).rejects.toBeInstanceOf(EncodeFailed);
      await expect(orm.insert(Odd, { id: 1, at: new Date('+010000-01-01T00:00:00Z') })).rejects.toBeInstanceOf(EncodeFailed);
      const row = await orm.insert(Odd, { id: 1, d: -0, t: null, at: null });
      expect(Object.is(row.d, 0)).toBe(true);
    }
  });
});
