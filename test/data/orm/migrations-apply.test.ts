/**
 * The migrator on both servers: applies pending migrations in order (each in its own transaction,
 * recorded with its checksum), decides by the set of applied ids so a gap filled later still
 * runs, aborts on a changed file before applying anything, uses the dialect variant of the
 * backend, and stops at a failing migration with nothing of it left behind.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { MigrationChecksumMismatch, MigrationFailed, type Database } from '../../../src/data/index.js';
import { checksumOf, Migrator, readLedger, type MigrationProgress } from '../../../src/data/orm/migrations/index.js';
import { introspect } from '../../../src/data/orm/schema/index.js';
import { testSystem } from '../../support/systems.js';
import { BACKENDS, type OpenedBackend } from '../backends.js';
import { memoryLogger, tempDir } from './schema-support.js';

describe.each(BACKENDS)('migrations on $name', (backend) => {
  let system: ActorSystem;
  let opened: OpenedBackend;
  let db: Database;
  let dir: ReturnType<typeof tempDir>;

  beforeEach(async () => {
    system = testSystem();
    opened = await backend.open(system);
    db = opened.db;
    dir = tempDir('molo-migrations-');
  });

  afterEach(async () => {
    await opened.dispose();
    system.shutdown();
    dir.remove();
  });

  const write = (name: string, text: string): void => writeFileSync(join(dir.path, name), text);
  const tables = async (): Promise<string[]> => [...(await introspect(db)).tables.keys()].sort();

  it('applies pending migrations in order, records their checksums, and a second up does nothing', async () => {
    write('0001_users.sql', "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT 'a;b');\nINSERT INTO users (id) VALUES (1);\n");
    write('0002_posts.sql', 'CREATE TABLE posts (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL);\nCREATE INDEX posts_user ON posts (user_id);\n');
    const migrator = new Migrator(db, { dir: dir.path });
    expect((await migrator.status()).entries.map((e) => `${e.state} ${e.id}`)).toEqual(['pending 0001_users', 'pending 0002_posts']);

    const progress: MigrationProgress[] = [];
    expect(await migrator.up({ onProgress: (p) => progress.push(p) })).toEqual(['0001_users', '0002_posts']);
    expect(progress.map((p) => `${p.event} ${p.id} ${p.index + 1}/${p.total}`)).toEqual(['applying 0001_users 1/2', 'applied 0001_users 1/2', 'applying 0002_posts 2/2', 'applied 0002_posts 2/2']);
    expect(await tables()).toEqual(['posts', 'schema_migrations', 'users']);
    expect((await db.query<{ name: string }>('SELECT name FROM users')).rows).toEqual([{ name: 'a;b' }]);

    const ledger = await readLedger(db);
    expect(ledger.map((row) => [row.id, row.kind, row.checksum])).toEqual([
      ['0001_users', 'migration', checksumOf("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT 'a;b');\nINSERT INTO users (id) VALUES (1);\n")],
      ['0002_posts', 'migration', checksumOf('CREATE TABLE posts (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL);\nCREATE INDEX posts_user ON posts (user_id);\n')],
    ]);
    expect(ledger[0]!.appliedAt).toBeInstanceOf(Date);

    expect(await migrator.up()).toEqual([]);
    const status = await migrator.status();
    expect(status).toMatchObject({ applied: 2, pending: 0, changed: 0, missing: 0 });
  });

  it('a migration that sets session state applies (in a pinned session), and the state does not outlive it', async () => {
    const setting = backend.name === 'postgres' ? "SET search_path TO public;\nSET statement_timeout = 0;\n" : 'PRAGMA foreign_keys = OFF;\n';
    write('0001_session.sql', `${setting}CREATE TABLE notes (id INTEGER PRIMARY KEY);\n`);
    expect(await new Migrator(db, { dir: dir.path }).up()).toEqual(['0001_session']);
    expect(await tables()).toEqual(['notes', 'schema_migrations']);
    if (backend.name === 'postgres') {
      expect((await db.query<{ p: string }>("SELECT current_setting('search_path') AS p")).rows[0]!.p).toBe('"$user", public');
    } else {
      expect(await db.transaction(async (tx) => Object.values((await tx.query('PRAGMA foreign_keys')).rows[0]!)[0])).toBe(1);
    }
  });

  it('a gap filled by a migration merged later still applies (by the set of ids, not the latest)', async () => {
    write('0001_a.sql', 'CREATE TABLE a (x INTEGER);');
    write('0003_c.sql', 'CREATE TABLE c (x INTEGER);');
    const migrator = new Migrator(db, { dir: dir.path });
    expect(await migrator.up()).toEqual(['0001_a', '0003_c']);
    write('0002_b.sql', 'CREATE TABLE b (x INTEGER);');
    expect((await migrator.status()).entries.map((e) => `${e.state} ${e.id}`)).toEqual(['applied 0001_a', 'pending 0002_b', 'applied 0003_c']);
    expect(await migrator.up()).toEqual(['0002_b']);
    expect(await tables()).toEqual(['a', 'b', 'c', 'schema_migrations']);
  });

  it('a changed applied migration aborts the run with a loud typed error before anything applies', async () => {
    write('0001_a.sql', 'CREATE TABLE a (x INTEGER);');
    const { logger, lines } = memoryLogger();
    const migrator = new Migrator(db, { dir: dir.path, logger });
    await migrator.up();
    write('0001_a.sql', 'CREATE TABLE a (x INTEGER, y INTEGER);');
    write('0002_b.sql', 'CREATE TABLE b (x INTEGER);');
    const error = await migrator.up().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationChecksumMismatch);
    expect(error).toMatchObject({ code: 'ORM_MIGRATION_CHECKSUM_MISMATCH' });
    expect((error as MigrationChecksumMismatch).mismatches).toEqual([
      { id: '0001_a', file: join(dir.path, '0001_a.sql'), recorded: checksumOf('CREATE TABLE a (x INTEGER);'), actual: checksumOf('CREATE TABLE a (x INTEGER, y INTEGER);') },
    ]);
    expect(lines.some((line) => line.level === 'error' && line.fields['event'] === 'orm.migrations.checksum_mismatch')).toBe(true);
    expect(await tables()).toEqual(['a', 'schema_migrations']);
    expect((await migrator.status()).entries.map((e) => e.state)).toEqual(['changed', 'pending']);
  });

  it('uses the dialect variant of the backend', async () => {
    write('0001_t.sql', 'CREATE TABLE t (x INTEGER);');
    write('0002_fn.pg.sql', 'CREATE FUNCTION twice(n integer) RETURNS integer AS $$ BEGIN RETURN n * 2; END; $$ LANGUAGE plpgsql;\nCREATE VIEW doubled AS SELECT twice(x) AS y FROM t;');
    write('0002_fn.sqlite.sql', 'CREATE VIEW doubled AS SELECT x * 2 AS y FROM t;\nCREATE TRIGGER t_clamp AFTER INSERT ON t BEGIN UPDATE t SET x = CASE WHEN new.x > 100 THEN 100 ELSE new.x END WHERE rowid = new.rowid; END;');
    await new Migrator(db, { dir: dir.path }).up();
    await db.query('INSERT INTO t (x) VALUES (21)');
    expect((await db.query<{ y: number }>('SELECT y FROM doubled')).rows.map((r) => Number(r.y))).toEqual([42]);
    const [row] = await readLedger(db).then((rows) => rows.filter((r) => r.id === '0002_fn'));
    expect(row!.sql).toContain(backend.name === 'postgres' ? 'plpgsql' : 'CREATE TRIGGER');
  });

  it('a failing migration rolls back whole, stops the run, and keeps the ones before it', async () => {
    write('0001_ok.sql', 'CREATE TABLE ok (x INTEGER);');
    write('0002_bad.sql', 'CREATE TABLE half (x INTEGER);\nINSERT INTO no_such_table VALUES (1);');
    write('0003_later.sql', 'CREATE TABLE later (x INTEGER);');
    const migrator = new Migrator(db, { dir: dir.path });
    const error = await migrator.up().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationFailed);
    expect(error).toMatchObject({ code: 'ORM_MIGRATION_FAILED', id: '0002_bad' });
    expect(await tables()).toEqual(['ok', 'schema_migrations']);
    expect((await migrator.status()).entries.map((e) => `${e.state} ${e.id}`)).toEqual(['applied 0001_ok', 'pending 0002_bad', 'pending 0003_later']);
  });

  it('reports an applied migration whose file is gone as missing', async () => {
    write('0001_a.sql', 'CREATE TABLE a (x INTEGER);');
    const migrator = new Migrator(db, { dir: dir.path });
    await migrator.up();
    rmSync(join(dir.path, '0001_a.sql'));
    expect((await migrator.status()).entries).toEqual([expect.objectContaining({ id: '0001_a', state: 'missing' })]);
    expect(await migrator.up()).toEqual([]);
  });

  it('two migrators at once apply each migration once', async () => {
    for (let i = 1; i <= 4; i++) write(`000${i}_m${i}.sql`, `CREATE TABLE m${i} (x INTEGER);`);
    const a = new Migrator(db, { dir: dir.path });
    const b = new Migrator(db, { dir: dir.path });
    const [ra, rb] = await Promise.all([a.up(), b.up()]);
    expect([...ra, ...rb].sort()).toEqual(['0001_m1', '0002_m2', '0003_m3', '0004_m4']);
    expect((await readLedger(db)).map((row) => row.id)).toHaveLength(4);
  });
});
