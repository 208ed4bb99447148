/**
 * Migration files: names, dialect variants, checksums, the next number, and the statement
 * splitter SQLite needs (pure or on a temp directory).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MigrationInvalid } from '../../../src/data/index.js';
import { checksumOf, createMigrationFile, loadMigrations, migrationSlug, nextMigrationNumber, splitStatements } from '../../../src/data/orm/migrations/index.js';
import { tempDir } from './schema-support.js';

describe('migration files', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('molo-migrations-');
  });
  afterEach(() => dir.remove());

  const write = (name: string, text: string): void => writeFileSync(join(dir.path, name), text);

  it('loads NNNN_name.sql in order, picking the dialect variant for the backend', async () => {
    write('0002_add_index.pg.sql', 'CREATE INDEX i ON t USING btree (a);');
    write('0002_add_index.sqlite.sql', 'CREATE INDEX i ON t (a);');
    write('0001_create.sql', 'CREATE TABLE t (a int);');
    write('0010_both.sql', 'SELECT 1;');
    write('0010_both.pg.sql', 'SELECT 2;');
    write('README.md', 'not a migration');
    mkdirSync(join(dir.path, 'auto'));
    write('auto/20240101T000000000Z001_t_addColumn.pg.sql', 'ignored');

    const pg = await loadMigrations(dir.path, 'postgres');
    expect(pg.map((m) => [m.id, m.file.slice(dir.path.length + 1)])).toEqual([
      ['0001_create', '0001_create.sql'],
      ['0002_add_index', '0002_add_index.pg.sql'],
      ['0010_both', '0010_both.pg.sql'],
    ]);
    const sqlite = await loadMigrations(dir.path, 'sqlite');
    expect(sqlite.map((m) => m.file.slice(dir.path.length + 1))).toEqual(['0001_create.sql', '0002_add_index.sqlite.sql', '0010_both.sql']);
    expect(sqlite[1]!.checksum).toBe(checksumOf('CREATE INDEX i ON t (a);'));
    expect(pg[0]).toMatchObject({ number: 1, name: 'create' });
  });

  it('refuses a badly named .sql file and a variant without its counterpart', async () => {
    write('1_short.sql', '');
    await expect(loadMigrations(dir.path, 'postgres')).rejects.toBeInstanceOf(MigrationInvalid);
    dir.remove();
    dir = tempDir('molo-migrations-');
    write('0001_only_pg.pg.sql', 'SELECT 1;');
    expect((await loadMigrations(dir.path, 'postgres')).map((m) => m.id)).toEqual(['0001_only_pg']);
    const error = await loadMigrations(dir.path, 'sqlite').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationInvalid);
    expect((error as Error).message).toMatch(/0001_only_pg\.sqlite\.sql nor 0001_only_pg\.sql/);
  });

  it('a missing directory has no migrations', async () => {
    expect(await loadMigrations(join(dir.path, 'nope'), 'postgres')).toEqual([]);
  });

  it('checksums are sha256 of the text with CRLF as LF', () => {
    expect(checksumOf('SELECT 1;\n')).toBe(createHash('sha256').update('SELECT 1;\n').digest('hex'));
    expect(checksumOf('SELECT 1;\r\n')).toBe(checksumOf('SELECT 1;\n'));
    expect(checksumOf('SELECT 1;')).not.toBe(checksumOf('SELECT 2;'));
  });

  it('new: the next number after the highest, an empty file, never overwriting', async () => {
    expect(await nextMigrationNumber(dir.path)).toBe(1);
    write('0007_seven.sql', '');
    write('0003_three.pg.sql', '');
    write('0003_three.sqlite.sql', '');
    const [path] = await createMigrationFile(dir.path, 'Add Users!');
    expect(path).toBe(join(dir.path, '0008_add_users.sql'));
    const pair = await createMigrationFile(dir.path, 'split', { variants: true });
    expect(pair).toEqual([join(dir.path, '0009_split.pg.sql'), join(dir.path, '0009_split.sqlite.sql')]);
    await expect(createMigrationFile(dir.path, '!!!')).rejects.toBeInstanceOf(MigrationInvalid);
    expect(migrationSlug('  Héllo -- World  ')).toBe('h_llo_world');
  });
});

describe('splitStatements', () => {
  it('cuts at semicolons outside quotes and comments', () => {
    expect(splitStatements(`CREATE TABLE t (a text DEFAULT 'x;y'); -- c;\nINSERT INTO t VALUES ('a''b;'); /* ; */ SELECT "c;d" FROM t;`, 'sqlite')).toEqual([
      "CREATE TABLE t (a text DEFAULT 'x;y')",
      "-- c;\nINSERT INTO t VALUES ('a''b;')",
      '/* ; */ SELECT "c;d" FROM t',
    ]);
  });

  it('keeps a SQLite trigger body (with CASE ... END inside) in one statement', () => {
    const sql = `CREATE TRIGGER tr AFTER INSERT ON t BEGIN
  UPDATE t SET a = CASE WHEN new.a IS NULL THEN 'x' ELSE new.a END WHERE rowid = new.rowid;
  DELETE FROM u;
END;
SELECT 1;`;
    const parts = splitStatements(sql, 'sqlite');
    expect(parts).toHaveLength(2);
    expect(parts[0]).toMatch(/^CREATE TRIGGER tr[\s\S]*END$/);
    expect(parts[1]).toBe('SELECT 1');
  });

  it('keeps Postgres dollar-quoted bodies whole', () => {
    const sql = `CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END; $body$ LANGUAGE plpgsql; SELECT $$a;b$$;`;
    expect(splitStatements(sql, 'postgres')).toEqual([`CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END; $body$ LANGUAGE plpgsql`, 'SELECT $$a;b$$']);
  });

  it('drops pieces that are only comments or whitespace', () => {
    expect(splitStatements('-- nothing here\n ; /* or here */ ;', 'sqlite')).toEqual([]);
    expect(splitStatements('', 'postgres')).toEqual([]);
  });
});
