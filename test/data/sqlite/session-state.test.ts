/**
 * Session state on SQLite's shared writer (04 BP-2 applied to SQLite, issue 26 item 2): a PRAGMA
 * that sets, ATTACH, DETACH and temporary objects are refused on `db.query()` and in transactions,
 * allowed in `db.session(fn)`, and the writer is restored when the session ends.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { DbError, type Database } from '../../../src/data/index.js';
import { testSystem } from '../../support/systems.js';
import { BACKENDS, type OpenedBackend } from '../backends.js';

const SQLITE = BACKENDS.find((backend) => backend.name === 'sqlite')!;

/** Each kind, in an order that also runs in one session (and leaves state behind). */
const SESSION_STATEMENTS = [
  'PRAGMA foreign_keys = OFF',
  'PRAGMA synchronous(0)',
  'PRAGMA main.cache_size = 10',
  "ATTACH DATABASE ':memory:' AS other",
  'DETACH DATABASE other',
  "ATTACH DATABASE ':memory:' AS other2",
  'CREATE TEMP TABLE probe_temp (x)',
  'CREATE TEMPORARY VIEW probe_view AS SELECT 1 AS one',
];

const codeOf = (error: unknown): string | undefined => (error instanceof DbError ? error.code : undefined);
const pragma = async (db: Database, name: string): Promise<unknown> => Object.values((await db.query(`PRAGMA ${name}`)).rows[0]!)[0];

describe('session state on the shared SQLite writer', () => {
  let system: ActorSystem;
  let opened: OpenedBackend;
  let db: Database;

  beforeEach(async () => {
    system = testSystem();
    opened = await SQLITE.open(system);
    db = opened.db;
    await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
  });
  afterEach(async () => {
    await opened.dispose();
    await system.shutdown();
  });

  it('refuses each kind on db.query(), naming db.session, and lets reads through', async () => {
    const outcomes: Record<string, string> = {};
    for (const sql of SESSION_STATEMENTS) {
      outcomes[sql] = await db.query(sql).then(
        () => 'ran',
        (error: unknown) => codeOf(error) ?? String(error),
      );
    }
    const refused = Object.values(outcomes).filter((outcome) => outcome === 'DB_SESSION_STATE_REFUSED').length;
    console.log(`[probe] sqlite shared writer: ${refused}/${SESSION_STATEMENTS.length} session-state statements refused`);
    expect(outcomes).toEqual(Object.fromEntries(SESSION_STATEMENTS.map((sql) => [sql, 'DB_SESSION_STATE_REFUSED'])));
    await expect(db.query('PRAGMA foreign_keys = OFF')).rejects.toThrow(/db\.session\(fn\)/);
    expect(await pragma(db, 'foreign_keys')).toBe(1);
    expect((await db.query('PRAGMA table_info(items)')).rows).toHaveLength(2);
    expect((await db.query('PRAGMA integrity_check')).rows).toEqual([{ integrity_check: 'ok' }]);
    const refusedInTx = await db.transaction((tx) => tx.query('PRAGMA synchronous = OFF')).then(
      () => 'ran',
      (error: unknown) => codeOf(error),
    );
    expect(refusedInTx).toBe('DB_SESSION_STATE_REFUSED');
  });

  it("a PRAGMA run by one caller does not change the next caller's writer", async () => {
    await db.query('PRAGMA foreign_keys = OFF').catch(() => undefined);
    const seen = await pragma(db, 'foreign_keys');
    console.log(`[probe] next caller's foreign_keys: ${String(seen)}`);
    expect(seen).toBe(1);
  });

  it('allows every kind in a session and restores the writer when it ends', async () => {
    const inside = await db.session(async (session) => {
      for (const sql of SESSION_STATEMENTS) await session.query(sql);
      return Object.values((await session.query('PRAGMA foreign_keys')).rows[0]!)[0];
    });
    expect(inside).toBe(0);
    const after = {
      foreignKeys: await pragma(db, 'foreign_keys'),
      synchronous: await db.transaction(async (tx) => Object.values((await tx.query('PRAGMA synchronous')).rows[0]!)[0]),
      // On the writer (a plain SELECT would go to a reader, which never saw the ATTACH).
      attached: (await db.transaction(async (tx) => (await tx.query<{ name: string }>("SELECT name FROM pragma_database_list WHERE name <> 'temp' ORDER BY name")).rows)).map((row) => row.name),
      temp: (await db.transaction(async (tx) => (await tx.query("SELECT name FROM temp.sqlite_master WHERE name LIKE 'probe%'")).rows)).length,
    };
    console.log(`[probe] sqlite writer after a session: ${JSON.stringify(after)}`);
    expect(after).toEqual({ foreignKeys: 1, synchronous: 1, attached: ['main'], temp: 0 });
  });
});
