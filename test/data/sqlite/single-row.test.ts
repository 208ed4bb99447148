/**
 * Point reads run with `get()`: only statements whose program can produce one row at most. The
 * lookalikes that return more (IN lists, OR of keys, joins that fan out) must still return every row,
 * and a schema change must not leave a stale answer behind.
 */
import { describe, expect, it } from 'vitest';
import { runsResultRowOnce } from '../../../src/data/sqlite/single-row.js';
import { tempDatabasePerTest } from './support.js';

const each = tempDatabasePerTest({ readers: 1 }, async (db) => {
  await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
  await db.query('CREATE TABLE tags (id INTEGER PRIMARY KEY, item_id INTEGER, tag TEXT)');
  await db.queryMany('INSERT INTO items (id, label) VALUES (?, ?)', [
    [1, 'one'],
    [2, 'two'],
    [3, 'three'],
  ]);
  await db.queryMany('INSERT INTO tags (item_id, tag) VALUES (?, ?)', [
    [1, 'x'],
    [1, 'y'],
  ]);
});

describe('single-row reads', () => {
  it('a key lookup returns its row, or none', async () => {
    expect((await each.temp.db.query('SELECT id, label FROM items WHERE id = ?', [2])).rows).toEqual([{ id: 2, label: 'two' }]);
    expect((await each.temp.db.query('SELECT id, label FROM items WHERE id = ?', [9])).rows).toEqual([]);
  });

  it('reads that look like a key lookup but return more keep every row', async () => {
    const ids = async (sql: string, params: unknown[]): Promise<number[]> =>
      (await each.temp.db.query<{ id: number }>(sql, params as never)).rows.map((row) => Number(row.id)).sort();
    // Each is run twice: the first run decides how the statement runs, the second uses that decision.
    for (let run = 0; run < 2; run++) {
      expect(await ids('SELECT id FROM items WHERE id IN (?, ?)', [1, 3])).toEqual([1, 3]);
      expect(await ids('SELECT id FROM items WHERE id = ? OR id = ?', [1, 2])).toEqual([1, 2]);
      expect(await ids('SELECT items.id AS id FROM items JOIN tags ON tags.item_id = items.id WHERE items.id = ?', [1])).toEqual([1, 1]);
      expect(await ids('SELECT id FROM items WHERE id = ? UNION ALL SELECT id FROM items WHERE id = ?', [1, 2])).toEqual([1, 2]);
    }
  });

  it('a table recreated without the key returns every matching row after the schema change', async () => {
    const sql = 'SELECT label FROM items WHERE id = ?';
    expect((await each.temp.db.query(sql, [1])).rows).toHaveLength(1);
    await each.temp.db.query('DROP TABLE items');
    await each.temp.db.query('CREATE TABLE items (id INTEGER, label TEXT)');
    await each.temp.db.queryMany('INSERT INTO items (id, label) VALUES (?, ?)', [
      [1, 'a'],
      [1, 'b'],
    ]);
    for (let run = 0; run < 3; run++) expect((await each.temp.db.query(sql, [1])).rows).toHaveLength(2);
  });

  it('the program check: one ResultRow and no loop', () => {
    const op = (opcode: string, p2 = 0): { opcode: string; p2: number } => ({ opcode, p2 });
    expect(runsResultRowOnce([op('Init', 8), op('OpenRead'), op('SeekRowid', 6), op('ResultRow'), op('Halt'), op('Transaction'), op('Goto', 1)])).toBe(true);
    expect(runsResultRowOnce([op('Init', 8), op('Rewind'), op('ResultRow'), op('Next', 2), op('Halt'), op('Goto', 1)])).toBe(false);
    expect(runsResultRowOnce([op('Init', 8), op('ResultRow'), op('Goto', 1), op('ResultRow')])).toBe(false);
    expect(runsResultRowOnce([op('Init', 4), op('ResultRow'), op('Goto', 1)])).toBe(true);
    expect(runsResultRowOnce([op('Init', 4), op('ResultRow'), op('Goto', 0)])).toBe(false);
  });
});
