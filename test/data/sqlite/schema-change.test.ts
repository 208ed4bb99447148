/**
 * A cached statement follows the schema: after `ALTER TABLE … ADD COLUMN`, `SELECT *` reports the new
 * column in its fields, and an INTEGER there reads as a number, on the writer, on a reader, in a
 * transaction and through `queryMany`.
 */
import { describe, expect, it } from 'vitest';
import { tempDatabasePerTest } from './support.js';

const each = tempDatabasePerTest({ readers: 1 }, async (db) => {
  await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
  await db.query("INSERT INTO items (id, label) VALUES (1, 'a'), (2, 'b')");
});

const names = (fields: readonly { name: string }[]): string[] => fields.map((field) => field.name);

describe('a schema change', () => {
  it('shows a new column to a read already cached on a reader', async () => {
    const before = await each.temp.db.query('SELECT * FROM items ORDER BY id');
    expect(names(before.fields)).toEqual(['id', 'label']);
    await each.temp.db.query('ALTER TABLE items ADD COLUMN score INTEGER NOT NULL DEFAULT 7');
    const after = await each.temp.db.query('SELECT * FROM items ORDER BY id');
    expect(names(after.fields)).toEqual(['id', 'label', 'score']);
    expect(after.rows).toEqual([
      { id: 1, label: 'a', score: 7 },
      { id: 2, label: 'b', score: 7 },
    ]);
    const point = await each.temp.db.query('SELECT * FROM items WHERE id = ?', [2]);
    expect(point.rows).toEqual([{ id: 2, label: 'b', score: 7 }]);
  });

  it('shows a new column to a read already cached on the writer', async () => {
    await each.temp.db.transaction(async (tx) => {
      expect(names((await tx.query('SELECT * FROM items WHERE id = ?', [1])).fields)).toEqual(['id', 'label']);
      await tx.query('ALTER TABLE items ADD COLUMN score INTEGER NOT NULL DEFAULT 7');
      const after = await tx.query('SELECT * FROM items WHERE id = ?', [1]);
      expect(names(after.fields)).toEqual(['id', 'label', 'score']);
      expect(after.rows).toEqual([{ id: 1, label: 'a', score: 7 }]);
    });
  });

  it('shows a new column to a RETURNING statement run through queryMany', async () => {
    const sql = 'UPDATE items SET label = label || ? WHERE id = ? RETURNING *';
    expect((await each.temp.db.queryMany(sql, [['x', 1]]))[0]!.rows).toEqual([{ id: 1, label: 'ax' }]);
    await each.temp.db.query('ALTER TABLE items ADD COLUMN score INTEGER NOT NULL DEFAULT 7');
    const [result] = await each.temp.db.queryMany(sql, [['y', 1]]);
    expect(names(result!.fields)).toEqual(['id', 'label', 'score']);
    expect(result!.rows).toEqual([{ id: 1, label: 'axy', score: 7 }]);
  });
});
