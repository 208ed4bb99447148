/**
 * SQLite's 12-step table rebuild: the CREATE TABLE edit (pure), then the procedure on a real file
 * with what a rebuild must keep: rows, indexes, triggers, views that name the table, foreign keys
 * pointing at it (checked, with enforcement back on afterwards), and the AUTOINCREMENT mark.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import type { Database } from '../../../src/data/index.js';
import { columnNameOf, dropNotNull, parseCreateTable, rebuildTable, rewriteCreateTable } from '../../../src/data/orm/heal/index.js';
import { introspect } from '../../../src/data/orm/schema/index.js';
import { testSystem } from '../../support/systems.js';
import { BACKENDS, type OpenedBackend } from '../backends.js';

describe('CREATE TABLE edits', () => {
  const sql = `CREATE TABLE "t" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
  [we,ird] TEXT NOT NULL DEFAULT 'NOT NULL, really' CHECK ([we,ird] IS NOT NULL),
  b INTEGER CONSTRAINT b_nn NOT NULL ON CONFLICT ABORT REFERENCES p(id),
  "c""q" REAL,
  CONSTRAINT "t_b_key" UNIQUE (b, "c""q"),
  CHECK (b > 0)
) STRICT`;

  it('parses columns, table constraints and the tail', () => {
    const parsed = parseCreateTable(sql);
    expect(parsed.head).toBe('CREATE TABLE "t"');
    expect(parsed.columns.map(columnNameOf)).toEqual(['id', 'we,ird', 'b', 'c"q']);
    expect(parsed.constraints).toEqual(['CONSTRAINT "t_b_key" UNIQUE (b, "c""q")', 'CHECK (b > 0)']);
    expect(parsed.tail).toBe('STRICT');
  });

  it('drops NOT NULL only where it is a constraint, never inside a string or a CHECK', () => {
    expect(dropNotNull(`[we,ird] TEXT NOT NULL DEFAULT 'NOT NULL, really' CHECK ([we,ird] IS NOT NULL)`)).toBe(
      `[we,ird] TEXT DEFAULT 'NOT NULL, really' CHECK ([we,ird] IS NOT NULL)`,
    );
    expect(dropNotNull('b INTEGER CONSTRAINT b_nn NOT NULL ON CONFLICT ABORT REFERENCES p(id)')).toBe('b INTEGER REFERENCES p(id)');
  });

  it('rewrites for a new name with the edit, keeping everything else', () => {
    const out = rewriteCreateTable(sql, '"new_t"', { dropNotNull: [{ column: 'b', defaultSql: '1' }], addColumns: ['"d" TEXT'] });
    expect(out).toBe(
      `CREATE TABLE "new_t" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, [we,ird] TEXT NOT NULL DEFAULT 'NOT NULL, really' CHECK ([we,ird] IS NOT NULL), b INTEGER REFERENCES p(id) DEFAULT 1, "c""q" REAL, "d" TEXT, CONSTRAINT "t_b_key" UNIQUE (b, "c""q"), CHECK (b > 0)) STRICT`,
    );
    expect(() => rewriteCreateTable(sql, '"x"', { dropNotNull: [{ column: 'nope' }] })).toThrow(/no column nope/);
  });
});

describe('the rebuild on sqlite', () => {
  const sqlite = BACKENDS.find((b) => b.name === 'sqlite')!;
  let system: ActorSystem;
  let opened: OpenedBackend;
  let db: Database;

  beforeEach(async () => {
    system = testSystem();
    opened = await sqlite.open(system);
    db = opened.db;
  });

  afterEach(async () => {
    await opened.dispose();
    system.shutdown();
  });

  it('keeps rows, indexes, triggers, views, incoming foreign keys and the AUTOINCREMENT mark', async () => {
    await db.query('CREATE TABLE parent (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, note TEXT NOT NULL)');
    await db.query('CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent(id))');
    await db.query('CREATE UNIQUE INDEX parent_name ON parent (name)');
    await db.query('CREATE TABLE audit (what TEXT)');
    await db.query("CREATE TRIGGER parent_audit AFTER INSERT ON parent BEGIN INSERT INTO audit VALUES ('insert ' || new.name); END");
    await db.query('CREATE VIEW parent_names AS SELECT name FROM parent');
    for (const name of ['a', 'b', 'c']) await db.query("INSERT INTO parent (name, note) VALUES ($1, 'n')", [name]);
    await db.query('DELETE FROM parent WHERE id = 3');
    await db.query('INSERT INTO child (id, parent_id) VALUES (1, 1), (2, 2)');

    const result = await rebuildTable(db, 'parent', { dropNotNull: [{ column: 'note', defaultSql: "'none'" }] });
    expect(result.rowsCopied).toBe(2);

    const table = (await introspect(db, ['parent'])).tables.get('parent')!;
    expect(table.columns.find((c) => c.name === 'note')).toMatchObject({ nullable: true, default: "'none'" });
    expect(table.indexes.map((i) => i.name)).toContain('parent_name');
    expect((await db.query('SELECT id, name, note FROM parent ORDER BY id')).rows).toEqual([
      { id: 1, name: 'a', note: 'n' },
      { id: 2, name: 'b', note: 'n' },
    ]);
    // The trigger came back, the view still works, the mark is kept (id 3 is not reused), the default applies.
    await db.query("INSERT INTO parent (name) VALUES ('d')");
    expect((await db.query('SELECT id, note FROM parent WHERE name = $1', ['d'])).rows).toEqual([{ id: 4, note: 'none' }]);
    expect((await db.query('SELECT what FROM audit ORDER BY rowid')).rows.map((r) => r['what'])).toEqual(['insert a', 'insert b', 'insert c', 'insert d']);
    expect((await db.query('SELECT name FROM parent_names ORDER BY name')).rows.map((r) => r['name'])).toEqual(['a', 'b', 'd']);
    // Foreign keys are on again and still point at the rebuilt table.
    expect((await db.query('PRAGMA foreign_keys')).rows).toEqual([{ foreign_keys: 1 }]);
    await expect(db.query('INSERT INTO child (id, parent_id) VALUES (3, 99)')).rejects.toThrow(/FOREIGN KEY constraint failed/);
    expect((await db.query('PRAGMA foreign_key_check')).rows).toEqual([]);
  });

  it('a rebuild that would break a foreign key rolls back whole, with foreign keys on again', async () => {
    await db.query('CREATE TABLE parent (id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE)');
    await db.query('CREATE TABLE child (id INTEGER PRIMARY KEY, parent_code TEXT REFERENCES parent(code))');
    // A child row pointing nowhere, inserted while enforcement was off: the rebuild's foreign_key_check finds it.
    await db.session(async (s) => {
      await s.query('PRAGMA foreign_keys=OFF');
      await s.query("INSERT INTO child (id, parent_code) VALUES (1, 'missing')");
      await s.query('PRAGMA foreign_keys=ON');
    });
    await expect(rebuildTable(db, 'child', { addColumns: ['extra TEXT'] })).rejects.toThrow(/foreign key check failed/);
    expect((await introspect(db, ['child'])).tables.get('child')!.columns.map((c) => c.name)).toEqual(['id', 'parent_code']);
    expect((await db.query('PRAGMA foreign_keys')).rows).toEqual([{ foreign_keys: 1 }]);
    expect([...(await introspect(db)).tables.keys()].sort()).toEqual(['child', 'parent']);
  });
});
