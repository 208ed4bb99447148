/**
 * classify(backend, error) → HealPlan | Fatal: pure, checked on hand-made errors and on the real
 * errors the real servers raise for each row of the heal matrix.
 */
import { describe, expect, it } from 'vitest';
import { DbError, EncodeFailed, type Database, type Value } from '../../../src/data/index.js';
import { classify, triggerCode } from '../../../src/data/orm/heal/index.js';
import { BACKENDS, openForEachTest } from '../backends.js';

const pg = (sqlstate: string, message: string, fields: Record<string, string> = {}): DbError => new DbError(message, { sqlstate, ...fields });
const lite = (sqliteCode: string, message: string): DbError => new DbError(message, { sqliteCode });

describe('classify, pure', () => {
  it.each([
    [pg('42P01', 'relation "users" does not exist'), { kind: 'createTable', table: 'users' }],
    [pg('42P01', 'relation "public.users" does not exist'), { kind: 'createTable', table: 'users' }],
    [pg('42703', 'column "email" does not exist'), { kind: 'addColumn', column: 'email' }],
    [pg('42703', 'column "email" of relation "users" does not exist'), { kind: 'addColumn', table: 'users', column: 'email' }],
    [pg('42703', 'column u.email does not exist'), { kind: 'addColumn', column: 'email' }],
    [pg('22001', 'value too long for type character varying(20)'), { kind: 'widenVarchar', length: 20 }],
    [pg('22003', 'integer out of range'), { kind: 'widenInt', from: 'integer' }],
    [pg('22003', 'value "3000000000" is out of range for type integer'), { kind: 'widenInt', from: 'integer' }],
    [pg('22003', 'smallint out of range'), { kind: 'widenInt', from: 'smallint' }],
    [pg('23502', 'null value in column "c" of relation "t" violates not-null constraint', { table: 't', column: 'c' }), { kind: 'dropNotNull', table: 't', column: 'c' }],
    [lite('SQLITE_ERROR', 'no such table: users'), { kind: 'createTable', table: 'users' }],
    [lite('SQLITE_ERROR', 'no such table: main.users'), { kind: 'createTable', table: 'users' }],
    [lite('SQLITE_ERROR', 'no such column: email'), { kind: 'addColumn', column: 'email' }],
    [lite('SQLITE_ERROR', 'no such column: u.email'), { kind: 'addColumn', column: 'email' }],
    [lite('SQLITE_ERROR', 'table users has no column named email'), { kind: 'addColumn', table: 'users', column: 'email' }],
    [lite('SQLITE_ERROR', 'no such column: "email" - should this be a string literal in single-quotes?'), { kind: 'addColumn', column: 'email' }],
    [lite('SQLITE_ERROR', 'no such column: "u"."email"'), { kind: 'addColumn', column: 'email' }],
    [lite('SQLITE_CONSTRAINT_NOTNULL', 'NOT NULL constraint failed: users.name'), { kind: 'dropNotNull', table: 'users', column: 'name' }],
  ])('%s → %o', (error, plan) => {
    expect(classify(error.sqlstate !== undefined ? 'postgres' : 'sqlite', error)).toEqual(plan);
  });

  it('the driver refusing a value for an int4 parameter is an int overflow too', () => {
    expect(classify('postgres', new EncodeFailed('bigint as int4: out of range -2147483648..2147483647'))).toEqual({ kind: 'widenInt', from: 'integer' });
    expect(classify('postgres', new EncodeFailed('number as int2: out of range -32768..32767'))).toEqual({ kind: 'widenInt', from: 'smallint' });
    expect(classify('postgres', new EncodeFailed('text contains NUL')).kind).toBe('fatal');
    expect(triggerCode(new EncodeFailed('x'))).toBe('DB_ENCODE_FAILED');
  });

  it.each([
    ['postgres', pg('23505', 'duplicate key value violates unique constraint "users_email_key"')],
    ['postgres', pg('22001', 'value too long for type character(2)')],
    ['postgres', pg('22003', 'bigint out of range')],
    ['postgres', pg('22003', 'numeric field overflow')],
    ['postgres', pg('42703', 'record "new" has no field "x"')],
    ['postgres', pg('40001', 'could not serialize access')],
    ['postgres', new Error('plain error')],
    ['postgres', 'a string'],
    ['postgres', null],
    ['sqlite', lite('SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed: users.email')],
    ['sqlite', lite('SQLITE_ERROR', 'near "SELEC": syntax error')],
    ['sqlite', lite('SQLITE_BUSY', 'database is locked')],
    // A Postgres error handed to the SQLite classifier (and back) is nobody's heal.
    ['sqlite', pg('42P01', 'relation "users" does not exist')],
    ['postgres', lite('SQLITE_ERROR', 'no such table: users')],
  ] as const)('%s: %s → fatal', (backend, error) => {
    expect(classify(backend, error).kind).toBe('fatal');
  });

  it('is pure: same input, same answer, input untouched', () => {
    const error = pg('42703', 'column "email" of relation "users" does not exist');
    const before = JSON.stringify(error);
    expect(classify('postgres', error)).toEqual(classify('postgres', error));
    expect(JSON.stringify(error)).toBe(before);
  });

  it('names the triggering code', () => {
    expect(triggerCode(pg('42P01', 'x'))).toBe('42P01');
    expect(triggerCode(lite('SQLITE_ERROR', 'x'))).toBe('SQLITE_ERROR');
    expect(triggerCode(new Error('x'))).toBeUndefined();
  });
});

/** Each statement raises one row of the matrix on that backend, against the table made in beforeAll. */
const REAL: Record<'postgres' | 'sqlite', readonly [string, readonly Value[], string][]> = {
  postgres: [
    ['SELECT * FROM missing_table', [], 'createTable'],
    ['SELECT missing_column FROM t', [], 'addColumn'],
    ['INSERT INTO t (s, missing_column) VALUES ($1, $2)', ['x', 1], 'addColumn'],
    ['UPDATE t SET missing_column = 1', [], 'addColumn'],
    ['INSERT INTO t (s, n) VALUES ($1, 1)', ['far too long'], 'widenVarchar'],
    ['INSERT INTO t (s, n) VALUES ($1, $2)', ['x', 3_000_000_000], 'widenInt'],
    ['UPDATE t SET n = n + 2147483647', [], 'widenInt'],
    ['INSERT INTO t (s) VALUES ($1)', ['x'], 'dropNotNull'],
    ['INSERT INTO t (s, n) VALUES ($1, 1), ($1, 1)', ['dup'], 'fatal'],
    ['SELEC 1', [], 'fatal'],
  ],
  sqlite: [
    ['SELECT * FROM missing_table', [], 'createTable'],
    ['INSERT INTO missing_table VALUES (1)', [], 'createTable'],
    ['SELECT missing_column FROM t', [], 'addColumn'],
    ['INSERT INTO t (s, missing_column) VALUES ($1, $2)', ['x', 1], 'addColumn'],
    ['UPDATE t SET missing_column = 1', [], 'addColumn'],
    ['INSERT INTO t (s) VALUES ($1)', ['x'], 'dropNotNull'],
    ['INSERT INTO t (s, n) VALUES ($1, 1), ($1, 1)', ['dup'], 'fatal'],
    ['SELEC 1', [], 'fatal'],
  ],
};

describe.each(BACKENDS)('classify real errors from $name', (backend) => {
  let db: Database;
  // One database for the whole matrix (the leak check stops systems after every test, so not beforeAll).
  openForEachTest(backend, async (opened) => {
    db = opened.db;
    await db.query('CREATE TABLE t (s varchar(3) NOT NULL UNIQUE, n integer NOT NULL)');
    await db.query("INSERT INTO t (s, n) VALUES ('a', 1)");
  });

  it('every row of the heal matrix, from the server itself', async () => {
    for (const [sql, params, expected] of REAL[backend.name]) {
      const error = await db.query(sql, params).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, sql).toBeInstanceOf(DbError);
      const plan = classify(backend.name, error);
      expect(plan.kind, `${sql}: ${(error as Error).message}`).toBe(expected);
      if (plan.kind === 'addColumn') expect(plan.column, sql).toBe('missing_column');
      if (plan.kind === 'createTable') expect(plan.table, sql).toBe('missing_table');
      if (plan.kind === 'widenVarchar') expect(plan.length, sql).toBe(3);
      if (plan.kind === 'dropNotNull') expect(plan, sql).toMatchObject({ table: 't', column: 'n' });
    }
  });
});
