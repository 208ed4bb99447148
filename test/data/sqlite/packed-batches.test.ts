/**
 * What the packed paths must keep: `queryMany` split into chunks (by rows and by bytes) still runs
 * every row in order, atomically, with every result; and a reader's reads that share one read
 * transaction per batch see every acknowledged write and leave no transaction open behind them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DbError, RowTooLarge } from '../../../src/data/index.js';
import { testSystem } from '../../support/systems.js';
import { openTemp, type TempDatabase } from './support.js';

let temp: TempDatabase | undefined;

afterEach(async () => {
  await temp?.dispose();
  temp = undefined;
});

async function open(payloadLimitBytes?: number): Promise<TempDatabase> {
  temp = await openTemp(testSystem(payloadLimitBytes === undefined ? {} : { payloadLimitBytes }), { readers: 1 });
  await temp.db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)');
  return temp;
}

describe('queryMany in chunks', () => {
  it('runs 20,000 rows (several chunks) in order, each result with its rows, count and insert id', async () => {
    const { db } = await open();
    const rows = Array.from({ length: 20_000 }, (_, i) => [i + 1, `label-${i + 1}`]);
    const results = await db.queryMany<{ id: number }>('INSERT INTO items (id, label) VALUES (?, ?) RETURNING id', rows);
    expect(results).toHaveLength(20_000);
    results.forEach((result, i) => {
      expect(result).toMatchObject({ affected: 1, lastInsertId: i + 1, command: 'INSERT', rows: [{ id: i + 1 }] });
    });
    const plain = await db.queryMany('UPDATE items SET label = ? WHERE id = ?', [
      ['x', 1],
      ['y', 99_999],
    ]);
    expect(plain.map((result) => [result.affected, result.rows, result.fields])).toEqual([
      [1, [], []],
      [0, [], []],
    ]);
  });

  it('a failure in a later chunk rolls back the earlier chunks too', async () => {
    const { db } = await open();
    const rows = Array.from({ length: 20_000 }, (_, i) => [i + 1, 'a']);
    rows[19_000] = [5, 'duplicate key'];
    const failure = await db.queryMany('INSERT INTO items (id, label) VALUES (?, ?)', rows).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DbError);
    expect((failure as DbError).sqliteCode).toMatch(/^SQLITE_CONSTRAINT/);
    expect((await db.query('SELECT count(*) AS n FROM items')).rows).toEqual([{ n: 0 }]);
  });

  it('splits rows by bytes under the payload cap; a row over the cap is RowTooLarge and nothing is stored', async () => {
    const { db } = await open(256 * 1024);
    const big = 'b'.repeat(20_000);
    // 60,000 bytes a row by the estimate: four or so to a chunk.
    const rows = Array.from({ length: 40 }, (_, i) => [i + 1, big]);
    const results = await db.queryMany('INSERT INTO items (id, label) VALUES (?, ?)', rows);
    expect(results.every((result) => result.affected === 1)).toBe(true);
    expect((await db.query('SELECT count(*) AS n, sum(length(label)) AS bytes FROM items')).rows).toEqual([{ n: 40, bytes: 800_000 }]);
    await db.query('DELETE FROM items');
    const tooLarge = await db.queryMany('INSERT INTO items (id, label) VALUES (?, ?)', [[1, 'small'], [2, 'x'.repeat(200_000)]]).catch((error: unknown) => error);
    expect(tooLarge).toBeInstanceOf(RowTooLarge);
    expect((await db.query('SELECT count(*) AS n FROM items')).rows).toEqual([{ n: 0 }]);
  });
});

describe('reads sharing a batch', () => {
  it('see every write acknowledged before them, and leave no read transaction open', async () => {
    const { db } = await open();
    for (let round = 1; round <= 5; round++) {
      await db.query('INSERT INTO items (id, label) VALUES (?, ?)', [round, `r${round}`]);
      // Issued together: one batch on the reader, one read transaction.
      const reads = await Promise.all(Array.from({ length: 200 }, (_, i) => db.query<{ n: number }>('SELECT count(*) AS n FROM items WHERE id <= ?', [1 + (i % round)])));
      reads.forEach((read, i) => expect(read.rows[0]!.n).toBe(1 + (i % round)));
      expect((await db.query<{ label: string }>('SELECT label FROM items WHERE id = ?', [round])).rows).toEqual([{ label: `r${round}` }]);
    }
    // A snapshot left open on the reader would keep TRUNCATE from resetting the WAL.
    const checkpoint = await db.checkpoint('TRUNCATE');
    expect(checkpoint.busy).toBe(0);
  });
});
