/**
 * What the packed paths must keep: `queryMany` split into chunks (by rows and by bytes) still runs
 * every row in order, atomically, with every result; and a reader's reads that share one read
 * transaction per batch see every acknowledged write and leave no transaction open behind them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DbError, EncodeFailed, RowTooLarge } from '../../../src/data/index.js';
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
    // Rows returned past the reply's budget are parked on the worker; asked for totals, it drops them.
    const totals = await db.queryMany('INSERT INTO items (id, label) VALUES (?, ?) RETURNING label', rows, undefined, { results: false });
    expect(totals).toEqual({ count: 40, affected: 40 });
    await db.query('DELETE FROM items');
    const tooLarge = await db.queryMany('INSERT INTO items (id, label) VALUES (?, ?)', [[1, 'small'], [2, 'x'.repeat(200_000)]]).catch((error: unknown) => error);
    expect(tooLarge).toBeInstanceOf(RowTooLarge);
    expect((await db.query('SELECT count(*) AS n FROM items')).rows).toEqual([{ n: 0 }]);
  });
});

describe('queryMany parameters', () => {
  it.each([10, 3_000])('keep their type and value, %i rows at a time', async (count) => {
    const { db } = await open();
    await db.query('CREATE TABLE kinds (k INTEGER, t TEXT, r REAL, v, b, n, u, big INTEGER, d TEXT, blob BLOB, j TEXT)');
    const date = new Date('2024-05-06T07:08:09.010Z');
    const rows = Array.from({ length: count }, (_, i) => [i, `text ${i} ü`, i + 0.25, i * 2, i % 2 === 0, null, undefined as unknown as null, 2n ** 60n + BigInt(i), date, Buffer.from([i % 256, 1]), { i, list: [1, 'a'] }]);
    await db.queryMany('INSERT INTO kinds VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', rows);
    const back = await db.query('SELECT k, t, r, v, typeof(v) AS vt, b, n, u, big, d, blob, j FROM kinds ORDER BY k', [], undefined, { maxRows: count });
    expect(back.rows).toHaveLength(count);
    back.rows.forEach((row, i) => {
      expect(row).toEqual({ k: i, t: `text ${i} ü`, r: i + 0.25, v: i * 2, vt: 'integer', b: i % 2 === 0 ? 1 : 0, n: null, u: null, big: 2n ** 60n + BigInt(i), d: date.toISOString(), blob: Buffer.from([i % 256, 1]), j: JSON.stringify({ i, list: [1, 'a'] }) });
    });
  });

  it('bind $1-style placeholders and wide rows across chunks', async () => {
    const { db } = await open();
    const numbered = Array.from({ length: 600 }, (_, i) => [`n${i}`, i + 1]);
    await db.queryMany('INSERT INTO items (label, id) VALUES ($1, $2)', numbered);
    expect((await db.query('SELECT count(*) AS n, sum(id) AS s FROM items WHERE label = \'n\' || (id - 1)')).rows).toEqual([{ n: 600, s: 180_300 }]);
    const columns = Array.from({ length: 40 }, (_, c) => `c${c}`);
    await db.query(`CREATE TABLE wide (${columns.join(', ')})`);
    const wide = Array.from({ length: 3_000 }, (_, i) => columns.map((_, c) => (c % 2 === 0 ? i * 40 + c : `v${i}.${c}`)));
    await db.queryMany(`INSERT INTO wide VALUES (${columns.map(() => '?').join(', ')})`, wide);
    const last = await db.query(`SELECT * FROM wide WHERE c0 = ?`, [2_999 * 40]);
    expect(Object.values(last.rows[0]!)).toEqual(wide[2_999]);
    expect((await db.query('SELECT count(*) AS n FROM wide')).rows).toEqual([{ n: 3_000 }]);
  });

  it('that cannot be stored fail the call, naming the parameter, and nothing is stored', async () => {
    const { db } = await open();
    const rows = Array.from({ length: 500 }, (_, i) => [i + 1, `label-${i}`]);
    rows[300] = [301, Symbol('no') as unknown as string];
    const failure = await db.queryMany('INSERT INTO items (id, label) VALUES (?, ?)', rows).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EncodeFailed);
    expect((failure as Error).message).toMatch(/parameter \$2/);
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
