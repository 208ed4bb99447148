/**
 * A SQLite database as a child of the application's tree: its threads' supervisor sits in the
 * tree under a name of its own, a kill of it is restarted by the tree's rules with the handle
 * serving on (data intact), and the tree's stop takes the threads down.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ActorSystem, Ref } from '../../../src/actors/index.js';
import { Supervisor } from '../../../src/behaviours/index.js';
import { sqliteChild, type SqliteDatabase } from '../../../src/data/sqlite/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { tempDir } from './support.js';

let system: ActorSystem;
let db: SqliteDatabase | undefined;
let dir: string;

afterEach(async () => {
  await db?.close();
  db = undefined;
  await system?.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

describe('sqliteChild', () => {
  it('is a supervisor child of the app tree; killed, the tree restarts it and the handle serves on', async () => {
    system = testSystem();
    dir = tempDir();
    const spec = sqliteChild(system, { file: join(dir, 'app.db'), name: 'appdb', readers: 1 });
    const root = await Supervisor.start(system, { strategy: 'one_for_one', intensity: 3, periodMs: 5_000, children: [spec] });
    db = await spec.database;
    await db.query('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    await db.query("INSERT INTO t (v) VALUES ('before')");

    const [child] = await Supervisor.whichChildren(system, root);
    expect(child).toMatchObject({ id: 'sqlite', type: 'supervisor' });
    const first = child!.ref as Ref;
    expect(first).toBe(db.supervisor);
    expect(system.whereis('molo.sqlite.appdb')).toBe(first);
    const threads = (await Supervisor.whichChildren(system, first)).map((c) => c.id);
    expect(threads).toEqual(['writer', 'reader.0', 'checkpoint']);

    system.exit(first, 'kill');
    await eventually(() => db!.supervisor !== first && system.isAlive(db!.supervisor), 10_000, 'restarted by the tree');
    const [again] = await Supervisor.whichChildren(system, root);
    expect(again!.ref).toBe(db.supervisor);
    // The same file through the new threads: what was written is there, writes go on.
    await eventually(() => db!.health().healthy, 10_000, 'healthy');
    let rows: unknown[] = [];
    for (let i = 0; i < 100 && rows.length === 0; i++) {
      rows = await db.query("INSERT INTO t (v) VALUES ('after') RETURNING id").then((r) => r.rows, () => []);
      if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(rows).toEqual([{ id: 2 }]);
    expect((await db.query('SELECT v FROM t ORDER BY id')).rows).toEqual([{ v: 'before' }, { v: 'after' }]);

    const supervisor = db.supervisor;
    await Supervisor.stop(system, root);
    expect(system.isAlive(supervisor)).toBe(false);
  });

  it('refuses an unknown option key, naming the nearest', () => {
    system = testSystem();
    dir = tempDir();
    expect(() => sqliteChild(system, { file: join(dir, 'x.db') }, { idd: 'x' } as never)).toThrow(/sqliteChild\.idd.*did you mean id/);
  });

  it('a file that cannot be opened fails the child start, and spec.database rejects with the reason', async () => {
    system = testSystem();
    dir = tempDir();
    const spec = sqliteChild(system, { file: join(dir, 'missing-dir', 'x.db') });
    await expect(Supervisor.start(system, { strategy: 'one_for_one', children: [spec] })).rejects.toThrow();
    await expect(spec.database).rejects.toMatchObject({ code: 'DB_SQLITE_DIRECTORY_MISSING' });
  });
});
