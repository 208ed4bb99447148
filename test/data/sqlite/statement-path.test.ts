/**
 * The per-statement path: a failure records the caller's stack however the statement was issued
 * (on a reader, in a transaction, refused before it was queued), and results of one statement share
 * their fields.
 */
import { describe, expect, it } from 'vitest';
import { DbError, OutsideTransaction, PoolClosed } from '../../../src/data/index.js';
import { openTemp, tempDatabasePerTest } from './support.js';

const each = tempDatabasePerTest({ readers: 1 }, async (db) => {
  await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT UNIQUE)');
});

function expectCallerStack(error: unknown, frame: string): void {
  expect(error).toBeInstanceOf(DbError);
  const { callerStack } = error as DbError;
  expect(callerStack).toContain(frame);
  expect(callerStack).toContain('statement-path.test.ts');
  expect(callerStack).not.toContain('src/data/sqlite/');
}

describe('caller stacks', () => {
  it('are recorded for a failed read on a reader', async () => {
    const error = await (async function readTheMissingTable(): Promise<unknown> {
      try {
        return await each.temp.db.query('SELECT * FROM missing');
      } catch (e) {
        return e;
      }
    })();
    expect((error as DbError).message).toMatch(/no such table/);
    expectCallerStack(error, 'readTheMissingTable');
  });

  it('are recorded for a failed statement in a transaction', async () => {
    await each.temp.db.query("INSERT INTO items (label) VALUES ('dup')");
    const error = await each.temp.db
      .transaction(async function insertInTransaction(tx) {
        try {
          await tx.query("INSERT INTO items (label) VALUES ('dup')");
        } catch (e) {
          return e;
        }
        return undefined;
      })
      .catch((e: unknown) => e);
    expect((error as DbError).sqliteCode).toBe('SQLITE_CONSTRAINT_UNIQUE');
    expectCallerStack(error, 'insertInTransaction');
  });

  it('are recorded for a statement refused before it was queued', async () => {
    const outside = await each.temp.db
      .transaction(async function writeBesideTheTransaction() {
        try {
          await each.temp.db.query("INSERT INTO items (label) VALUES ('x')");
        } catch (e) {
          return e;
        }
        return undefined;
      })
      .catch((e: unknown) => e);
    expect(outside).toBeInstanceOf(OutsideTransaction);
    expectCallerStack(outside, 'writeBesideTheTransaction');
    await each.temp.db.close();
    const closed = await (async function queryAfterClose(): Promise<unknown> {
      try {
        return await each.temp.db.query('SELECT 1');
      } catch (e) {
        return e;
      }
    })();
    expect(closed).toBeInstanceOf(PoolClosed);
    expectCallerStack(closed, 'queryAfterClose');
  });

  it('are not recorded with captureCallerStacks off', async () => {
    const other = await openTemp(each.system, { captureCallerStacks: false });
    try {
      const error = (await other.db.query('SELEKT 1').catch((e: unknown) => e)) as DbError;
      expect(error).toBeInstanceOf(DbError);
      expect(error.callerStack).toBeUndefined();
    } finally {
      await other.dispose();
    }
  });
});

describe('fields', () => {
  it('are shared by results of the same statement', async () => {
    await each.temp.db.query("INSERT INTO items (label) VALUES ('a'), ('b')");
    const first = await each.temp.db.query('SELECT * FROM items WHERE id = ?', [1]);
    const second = await each.temp.db.query('SELECT * FROM items WHERE id = ?', [2]);
    expect(first.fields.map((field) => field.name)).toEqual(['id', 'label']);
    expect(second.fields).toBe(first.fields);
    expect((await each.temp.db.query('SELECT * FROM items WHERE id = ?', [99])).fields).toBe(first.fields);
    const other = await each.temp.db.query('SELECT label AS name FROM items WHERE id = ?', [1]);
    expect(other.fields.map((field) => field.name)).toEqual(['name']);
    expect((await each.temp.db.query("INSERT INTO items (label) VALUES ('c')")).fields).toEqual([]);
  });
});
