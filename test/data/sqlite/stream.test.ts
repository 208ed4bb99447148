/**
 * `stream()`: rows of any count through a cursor on a pinned reader, in batches across the hop,
 * under the placement's payload cap.
 */
import { afterEach, expect, it } from 'vitest';
import { RowTooLarge, type Row } from '../../../src/data/index.js';
import { testSystem } from '../../support/systems.js';
import { openTemp, type TempDatabase } from './support.js';

let temp: TempDatabase | undefined;

afterEach(async () => {
  await temp?.dispose();
  temp = undefined;
});

async function collect<R extends Row>(rows: AsyncIterable<R>, stopAfter = Infinity): Promise<R[]> {
  const seen: R[] = [];
  for await (const row of rows) {
    seen.push(row);
    if (seen.length >= stopAfter) break;
  }
  return seen;
}

async function open(config: Parameters<typeof openTemp>[1] = {}, payloadLimitBytes?: number): Promise<TempDatabase> {
  const system = testSystem(payloadLimitBytes === undefined ? {} : { payloadLimitBytes });
  temp = await openTemp(system, config);
  await temp.db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT, b BLOB)');
  await temp.db.query('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 25000) INSERT INTO items (id, label) SELECT i, printf(?, i) FROM n', ['row %d']);
  return temp;
}

it('streams more rows than maxRows, in order, in batches', async () => {
  const { db } = await open();
  await expect(db.query('SELECT * FROM items')).rejects.toThrow(/stream/);
  const rows = await collect(db.stream<{ id: number; label: string }>('SELECT id, label FROM items WHERE id > ? ORDER BY id', [5], undefined, { batchSize: 700 }));
  expect(rows).toHaveLength(24_995);
  expect(rows[0]).toEqual({ id: 6, label: 'row 6' });
  expect(rows.at(-1)).toEqual({ id: 25_000, label: 'row 25000' });
  expect(rows.every((row, i) => row.id === i + 6)).toBe(true);
});

it('breaking out closes the cursor and frees the reader', async () => {
  const { db } = await open({ readers: 1 });
  for (let round = 0; round < 3; round++) {
    const first = await collect(db.stream<{ id: number }>('SELECT id FROM items ORDER BY id'), 10);
    expect(first.map((row) => row.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  }
  // The reader is not left pinned: plain reads run there, and a read-only transaction gets it.
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(db.health().idle).toBe(2);
  expect(await db.transaction(async (tx) => (await tx.query('SELECT count(*) AS n FROM items')).rows[0], { readOnly: true })).toEqual({ n: 25_000 });
});

it('streams inside a transaction see its own writes; with no readers, streams use the writer', async () => {
  const { db } = await open({ readers: 0 });
  const inside = await db.transaction(async (tx) => {
    await tx.query('DELETE FROM items WHERE id > ?', [100]);
    return collect(tx.stream<{ id: number }>('SELECT id FROM items ORDER BY id'));
  });
  expect(inside).toHaveLength(100);
  expect(await collect(db.stream('SELECT id FROM items'))).toHaveLength(100);
});

it('a statement that writes streams on the writer', async () => {
  const { db } = await open();
  const returned = await collect(db.stream<{ id: number }>('DELETE FROM items WHERE id <= ? RETURNING id', [3]));
  expect(returned.map((row) => row.id).sort()).toEqual([1, 2, 3]);
  // Starts like a read, so it goes to a reader first; the reader refuses it and the writer runs it.
  const cte = 'WITH doomed(id) AS (VALUES (4), (5)) DELETE FROM items WHERE id IN (SELECT id FROM doomed) RETURNING id';
  expect((await collect(db.stream<{ id: number }>(cte))).map((row) => row.id).sort()).toEqual([4, 5]);
  const viaQuery = await db.query('WITH doomed(id) AS (VALUES (6)) DELETE FROM items WHERE id IN (SELECT id FROM doomed)');
  expect(viaQuery).toMatchObject({ command: 'DELETE', affected: 1 });
  expect((await db.query('SELECT count(*) AS n FROM items')).rows).toEqual([{ n: 24_994 }]);
});

it('rows larger than one reply travel in smaller batches; a row over the payload cap is RowTooLarge', async () => {
  const { db } = await open({}, 256 * 1024);
  const blob = Buffer.alloc(20_000, 7);
  await db.query('UPDATE items SET b = ? WHERE id <= 100', [blob]);
  const rows = await collect(db.stream<{ id: number; b: Buffer }>('SELECT id, b FROM items WHERE id <= 100 ORDER BY id', [], undefined, { batchSize: 1_000 }));
  expect(rows).toHaveLength(100);
  expect(Buffer.isBuffer(rows[99]!.b)).toBe(true);
  expect(rows[99]!.b.equals(blob)).toBe(true);
  // The same through query(): parked in the worker and fetched in slices.
  const all = await db.query<{ b: Buffer }>('SELECT b FROM items WHERE id <= 100');
  expect(all.rows).toHaveLength(100);
  expect(all.rows.every((row) => Buffer.isBuffer(row.b) && row.b.length === 20_000)).toBe(true);
  // One row too large for any reply; and one parameter too large to send.
  await db.query('UPDATE items SET b = zeroblob(?) WHERE id = 1', [400_000]);
  await expect(collect(db.stream('SELECT b FROM items WHERE id = 1'))).rejects.toBeInstanceOf(RowTooLarge);
  await expect(db.query('SELECT b FROM items WHERE id = 1')).rejects.toBeInstanceOf(RowTooLarge);
  await expect(db.query('SELECT ?', [Buffer.alloc(400_000)])).rejects.toBeInstanceOf(RowTooLarge);
  expect((await db.query('SELECT count(*) AS n FROM items')).rows).toEqual([{ n: 25_000 }]);
});
