/**
 * Normalized types: a harmless spelling difference compares equal, a real one does not, and the
 * widen-only order is right (pure functions; the introspection test checks them against servers).
 */
import { describe, expect, it } from 'vitest';
import { normalizeType, relateTypes, sameType, sqliteAffinity } from '../../../src/data/orm/schema/index.js';

describe('normalizeType on postgres', () => {
  it.each([
    ['timestamp(3)', 'timestamp (3)'],
    ['timestamptz(3)', 'timestamp(3) with time zone'],
    ['timestamptz(3)', 'TIMESTAMP (3) WITH TIME ZONE'],
    ['timestamptz', 'timestamp with time zone'],
    ['timestamptz', 'timestamptz(6)'],
    ['timestamp', 'timestamp without time zone'],
    ['integer', 'int4'],
    ['integer', 'INT'],
    ['integer', 'serial'],
    ['bigint', 'int8'],
    ['bigint', 'bigserial'],
    ['smallint', 'int2'],
    ['varchar(20)', 'character varying(20)'],
    ['varchar(20)', 'CHARACTER  VARYING ( 20 )'],
    ['varchar', 'character varying'],
    ['double precision', 'float8'],
    ['double precision', 'float'],
    ['double precision', 'float(53)'],
    ['real', 'float4'],
    ['real', 'float(10)'],
    ['boolean', 'bool'],
    ['numeric(10,2)', 'decimal(10, 2)'],
    ['char(5)', 'character(5)'],
    ['integer[]', '_int4'],
    ['integer[]', 'int4 []'],
    ['jsonb', 'JSONB'],
  ])('%s == %s', (a, b) => {
    expect(normalizeType('postgres', b)).toBe(normalizeType('postgres', a));
    expect(sameType('postgres', a, b)).toBe(true);
  });

  it.each([
    ['varchar(20)', 'varchar(21)'],
    ['integer', 'bigint'],
    ['timestamptz(3)', 'timestamp(3)'],
    ['text', 'varchar(20)'],
    ['json', 'jsonb'],
    ['real', 'double precision'],
  ])('%s != %s', (a, b) => {
    expect(sameType('postgres', a, b)).toBe(false);
  });
});

describe('normalizeType on sqlite', () => {
  it('tidies case and spacing, and compares by affinity', () => {
    expect(normalizeType('sqlite', 'varchar (20)')).toBe('VARCHAR(20)');
    expect(sameType('sqlite', 'TEXT', 'varchar(20)')).toBe(true);
    expect(sameType('sqlite', 'INT', 'integer')).toBe(true);
    expect(sameType('sqlite', 'BIGINT', 'INTEGER')).toBe(true);
    expect(sameType('sqlite', 'REAL', 'double')).toBe(true);
    expect(sameType('sqlite', 'TEXT', 'BLOB')).toBe(false);
  });

  it('follows the affinity rules of datatype3.html', () => {
    expect(sqliteAffinity('INTEGER')).toBe('INTEGER');
    expect(sqliteAffinity('TINYINT')).toBe('INTEGER');
    expect(sqliteAffinity('NVARCHAR(100)')).toBe('TEXT');
    expect(sqliteAffinity('CLOB')).toBe('TEXT');
    expect(sqliteAffinity('BLOB')).toBe('BLOB');
    expect(sqliteAffinity('')).toBe('BLOB');
    expect(sqliteAffinity('DOUBLE PRECISION')).toBe('REAL');
    expect(sqliteAffinity('FLOATING POINT')).toBe('INTEGER'); // "POINT" contains INT: rule 1 wins, as in SQLite
    expect(sqliteAffinity('DECIMAL(10,5)')).toBe('NUMERIC');
  });
});

describe('relateTypes (is the database type wider than the model type?)', () => {
  it.each([
    ['varchar(80)', 'varchar(20)', 'wider'],
    ['character varying(20)', 'varchar(80)', 'narrower'],
    ['text', 'varchar(20)', 'wider'],
    ['varchar(20)', 'text', 'narrower'],
    ['bigint', 'integer', 'wider'],
    ['int4', 'int8', 'narrower'],
    ['smallint', 'integer', 'narrower'],
    ['double precision', 'real', 'wider'],
    ['timestamp(3) with time zone', 'timestamptz', 'narrower'],
    ['timestamptz(6)', 'timestamptz', 'same'],
    ['integer', 'text', 'incompatible'],
    ['timestamp', 'timestamptz', 'incompatible'],
    ['int4', 'integer', 'same'],
  ] as const)('%s vs %s: %s', (actual, wanted, relation) => {
    expect(relateTypes('postgres', actual, wanted)).toBe(relation);
  });

  it('on sqlite, only the affinity counts', () => {
    expect(relateTypes('sqlite', 'VARCHAR(3)', 'TEXT')).toBe('same');
    expect(relateTypes('sqlite', 'INTEGER', 'TEXT')).toBe('incompatible');
  });
});
