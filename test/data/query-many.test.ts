/**
 * `queryMany`: one statement over many rows, in order, atomically, one promise — on both backends.
 */
import { describe, expect, it } from 'vitest';
import { DbError, type Database } from '../../src/data/index.js';
import { BACKENDS, openForEachTest } from './backends.js';

describe.each(BACKENDS)('queryMany on $name', (backend) => {
  let db: Database;
  openForEachTest(backend, async (opened) => {
    db = opened.db;
    await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)');
  });

  const insert = (name: string): string => (name === 'postgres' ? 'INSERT INTO items (id, label) VALUES ($1, $2) RETURNING id' : 'INSERT INTO items (id, label) VALUES (?, ?) RETURNING id');

  it('runs the statement once per row, in order, and hands back every result in row order', async () => {
    const rows = Array.from({ length: 5_000 }, (_, i) => [i + 1, `label-${i + 1}`]);
    const results = await db.queryMany<{ id: number }>(insert(backend.name), rows);
    expect(results).toHaveLength(rows.length);
    results.forEach((result, i) => {
      expect(result.affected).toBe(1);
      expect(Number(result.rows[0]!.id)).toBe(i + 1);
    });
    const count = await db.query<{ n: number }>('SELECT count(*) AS n FROM items');
    expect(Number(count.rows[0]!.n)).toBe(rows.length);
  });

  it('is atomic: a failing row rolls back the rows before it, and the error is typed', async () => {
    const rows = [
      [1, 'a'],
      [2, 'b'],
      [1, 'duplicate key'],
      [3, 'c'],
    ];
    const failure = await db.queryMany(insert(backend.name), rows).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DbError);
    const count = await db.query<{ n: number }>('SELECT count(*) AS n FROM items');
    expect(Number(count.rows[0]!.n)).toBe(0);
  });

  it('resolves an empty list with no results', async () => {
    expect(await db.queryMany(insert(backend.name), [])).toEqual([]);
    expect(await db.queryMany(insert(backend.name), [], undefined, { results: false })).toEqual({ count: 0, affected: 0 });
  });

  it('with { results: false } resolves the rows run and the affected rows summed, not a result per row', async () => {
    const rows = Array.from({ length: 5_000 }, (_, i) => [i + 1, `label-${i + 1}`]);
    expect(await db.queryMany(insert(backend.name), rows, undefined, { results: false })).toEqual({ count: 5_000, affected: 5_000 });
    const update = backend.name === 'postgres' ? 'UPDATE items SET label = $1 WHERE id <= $2' : 'UPDATE items SET label = ? WHERE id <= ?';
    const totals = await db.queryMany(update, [['x', 10], ['y', 0], ['z', 3]], undefined, { results: false });
    expect(totals).toEqual({ count: 3, affected: 13 });
    const labels = await db.query<{ label: string; n: number }>('SELECT label, count(*) AS n FROM items WHERE id <= 10 GROUP BY label ORDER BY label');
    expect(labels.rows.map((row) => [row.label, Number(row.n)])).toEqual([
      ['x', 7],
      ['z', 3],
    ]);
  });

  it('with { results: false } is atomic too, and the error is typed', async () => {
    const rows = Array.from({ length: 3_000 }, (_, i) => [i + 1, 'a']);
    rows[2_500] = [7, 'duplicate key'];
    const failure = await db.queryMany(insert(backend.name), rows, undefined, { results: false }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DbError);
    const count = await db.query<{ n: number }>('SELECT count(*) AS n FROM items');
    expect(Number(count.rows[0]!.n)).toBe(0);
  });
});
