/**
 * SQLite through its worker threads, on real files: PRAGMAs in effect, values in and out, results,
 * errors, caps, and statements many and at once.
 */
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { DbError, EncodeFailed, InvalidDataConfig, PoolClosed, SqliteDirectoryMissing, TooManyParameters, TooManyRows } from '../../../src/data/index.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import { testSystem } from '../../support/systems.js';
import { openTemp, tempDir, type TempDatabase } from './support.js';

let system: ActorSystem;
let temp: TempDatabase;

beforeEach(async () => {
  system = testSystem();
  temp = await openTemp(system);
  await temp.db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT, n INTEGER, r REAL, b BLOB, flag INTEGER)');
});

afterEach(async () => {
  await temp.dispose();
});

describe('opening', () => {
  it('sets the PRAGMAs on the writer', async () => {
    const { db } = temp;
    const pragma = async (name: string): Promise<unknown> => Object.values((await db.query(`PRAGMA ${name}`)).rows[0]!)[0];
    expect(await pragma('journal_mode')).toBe('wal');
    expect(await pragma('synchronous')).toBe(1); // NORMAL
    expect(await pragma('foreign_keys')).toBe(1);
    expect(await pragma('busy_timeout')).toBe(5000);
    expect(await pragma('wal_autocheckpoint')).toBe(1000);
    expect(await pragma('journal_size_limit')).toBe(64 * 1024 * 1024);
  });

  it('readers run in WAL mode with the busy timeout, and refuse to write', async () => {
    const seen = await temp.db.transaction(
      async (tx) => {
        // `PRAGMA journal_mode` could set the mode, so SQLite does not count it as read-only; the table-valued form is.
        const mode = (await tx.query('SELECT * FROM pragma_journal_mode')).rows[0]!.journal_mode;
        const busy = (await tx.query('PRAGMA busy_timeout')).rows[0]!.timeout;
        const write = await tx.query('INSERT INTO items (label) VALUES (?)', ['x']).catch((error: unknown) => error);
        return { mode, busy, write };
      },
      { readOnly: true },
    );
    expect(seen.mode).toBe('wal');
    expect(seen.busy).toBe(5000);
    expect(seen.write).toBeInstanceOf(DbError);
    expect((seen.write as DbError).sqliteCode).toBe('SQLITE_READONLY');
  });

  it('foreign keys are enforced', async () => {
    const { db } = temp;
    await db.query('CREATE TABLE parents (id INTEGER PRIMARY KEY)');
    await db.query('CREATE TABLE children (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parents(id))');
    const error = (await db.query('INSERT INTO children (parent) VALUES (?)', [42]).catch((e: unknown) => e)) as DbError;
    expect(error).toBeInstanceOf(DbError);
    expect(error.sqliteCode).toBe('SQLITE_CONSTRAINT_FOREIGNKEY');
  });

  it('refuses bad options with InvalidDataConfig naming them, and :memory:', async () => {
    const dir = tempDir();
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    await expect(openSqlite(system, { file: `${dir}/x.db`, readers: 9 })).rejects.toThrow(InvalidDataConfig);
    await expect(openSqlite(system, { file: `${dir}/x.db`, readers: 9 })).rejects.toMatchObject({ option: 'sqlite.readers' });
    await expect(openSqlite(system, { file: ':memory:' })).rejects.toMatchObject({ option: 'sqlite.file' });
    await expect(openSqlite(system, { file: `${dir}/x.db`, busyTimeoutMs: -1 })).rejects.toMatchObject({ option: 'sqlite.busyTimeoutMs' });
    // Two databases of one name would share thread hosts.
    await expect(openSqlite(system, { file: `${dir}/x.db`, name: temp.db.name })).rejects.toMatchObject({ option: 'sqlite.name' });
  });

  it('a file in a directory that does not exist: SqliteDirectoryMissing naming it, not retryable, nothing created or left running', async () => {
    const dir = tempDir();
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'data', 'sub', 'x.db');
    const error = await openSqlite(system, { file, name: 'nodir', readers: 0 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(SqliteDirectoryMissing);
    expect(error).toMatchObject({ code: 'DB_SQLITE_DIRECTORY_MISSING', retryable: false, directory: join(dir, 'data', 'sub'), path: file });
    expect((error as Error).message).toBe(`${file}: its directory ${join(dir, 'data', 'sub')} does not exist (create it, or pass createDirectory: true to openSqlite)`);
    expect(((error as Error).cause as NodeJS.ErrnoException).code).toBe('ENOENT');
    expect(existsSync(join(dir, 'data'))).toBe(false);
    // The name is free again: nothing of the failed open is left.
    const db = await openSqlite(system, { file: join(dir, 'y.db'), name: 'nodir', readers: 0 });
    await db.close();
    await expect(openSqlite(system, { file: '/nonexistent-dir/sub/x.db' })).rejects.toMatchObject({ code: 'DB_SQLITE_DIRECTORY_MISSING', directory: '/nonexistent-dir/sub' });
    await expect(openSqlite(system, { file, createDirectory: 'yes' as never })).rejects.toMatchObject({ option: 'sqlite.createDirectory' });
  });

  it('a file in a directory that does not exist yet, with createDirectory: the directory is created, as the file is', async () => {
    const dir = tempDir();
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const db = await openSqlite(system, { file: join(dir, 'data', 'sub', 'x.db'), readers: 0, createDirectory: true });
    await db.query('CREATE TABLE t (x INTEGER)');
    await db.close();
    expect(statSync(join(dir, 'data', 'sub', 'x.db')).isFile()).toBe(true);
  });

  it('a directory that cannot be created is ConnectFailed, not retryable, and says why', async () => {
    const dir = tempDir();
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'plain-file'), '');
    const error = await openSqlite(system, { file: join(dir, 'plain-file', 'sub', 'x.db'), createDirectory: true }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'DB_CONNECT_FAILED', retryable: false });
    expect((error as Error).message).toMatch(/cannot create its directory .*plain-file\/sub \((ENOTDIR|EEXIST)\)/);
  });

  it('a file that cannot be opened is ConnectFailed, and leaves nothing running', async () => {
    const dir = tempDir();
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    // A directory where the file should be.
    await expect(openSqlite(system, { file: dir })).rejects.toMatchObject({ code: 'DB_CONNECT_FAILED' });
  });
});

describe('values', () => {
  it('round-trips INTEGER, REAL, TEXT, BLOB and NULL; booleans as 0/1; integers past 2^53 as bigint', async () => {
    const { db } = temp;
    const big = 2n ** 62n + 1n;
    const blob = Buffer.from([0, 1, 2, 255]);
    await db.query('INSERT INTO items (id, label, n, r, b, flag) VALUES (?, ?, ?, ?, ?, ?)', [1, 'héllo ✓', big, 1.5, blob, true]);
    await db.query('INSERT INTO items (id, label, n, r, b, flag) VALUES (?, ?, ?, ?, ?, ?)', [2, null, -(2n ** 63n), 2, null, false]);
    await db.query('INSERT INTO items (id, n) VALUES (?, ?)', [3, Number.MAX_SAFE_INTEGER]);
    const { rows } = await db.query('SELECT * FROM items ORDER BY id');
    expect(rows[0]).toEqual({ id: 1, label: 'héllo ✓', n: big, r: 1.5, b: blob, flag: 1 });
    expect(rows[1]).toEqual({ id: 2, label: null, n: -(2n ** 63n), r: 2, b: null, flag: 0 });
    expect(rows[2]!.n).toBe(Number.MAX_SAFE_INTEGER);
    expect(typeof rows[2]!.n).toBe('number');
    expect(Buffer.isBuffer(rows[0]!.b)).toBe(true);
  });

  it('binds integral numbers as INTEGER, dates as ISO-8601 text, objects and arrays as JSON', async () => {
    const { db } = temp;
    const at = new Date('2026-01-02T03:04:05.678Z');
    const { rows } = await db.query('SELECT typeof(?) AS i, typeof(?) AS f, ? / 2 AS half, ? AS at, ? AS doc, json_extract(?, ?) AS field', [
      5,
      5.5,
      5,
      at,
      { a: [1, 'b'] },
      [1, { c: true }],
      '$[1].c',
    ]);
    expect(rows[0]).toEqual({ i: 'integer', f: 'real', half: 2, at: '2026-01-02T03:04:05.678Z', doc: '{"a":[1,"b"]}', field: 1 });
  });

  it('refuses values it cannot store, naming the parameter', async () => {
    const { db } = temp;
    await expect(db.query('SELECT ?', [Symbol('x') as never])).rejects.toThrow(EncodeFailed);
    await expect(db.query('SELECT ?', [2n ** 64n])).rejects.toThrow(/parameter \$1/);
    await expect(db.query('SELECT ?', [new Date('nope')])).rejects.toThrow(EncodeFailed);
    await expect(db.query('SELECT 1', Array.from({ length: 1025 }, () => 1))).rejects.toThrow(TooManyParameters);
  });

  it('stores injection strings literally', async () => {
    const { db } = temp;
    const nasty = ["'); DROP TABLE items; --", 'Robert"); DELETE FROM items WHERE ("1"="1', '\u0000 NUL \\ backslash', "1' OR '1'='1"];
    for (const label of nasty) await db.query('INSERT INTO items (label) VALUES (?)', [label]);
    const { rows } = await db.query<{ label: string }>('SELECT label FROM items ORDER BY id');
    expect(rows.map((row) => row.label)).toEqual(nasty);
    expect((await db.query('SELECT count(*) AS n FROM items WHERE label = ?', ["1' OR '1'='1"])).rows[0]!.n).toBe(1);
  });

  it('takes $1 / ?1 numbered parameters as well as ?', async () => {
    const { db } = temp;
    await db.query('INSERT INTO items (id, label) VALUES ($1, $2)', [7, 'seven']);
    expect((await db.query('SELECT ?2 AS b, ?1 AS a', ['a', 'b'])).rows[0]).toEqual({ b: 'b', a: 'a' });
    expect((await db.query('SELECT label FROM items WHERE id = $1', [7])).rows[0]).toEqual({ label: 'seven' });
  });
});

describe('results', () => {
  it('reports affected rows, the last insert id and the command', async () => {
    const { db } = temp;
    const insert = await db.query('INSERT INTO items (label) VALUES (?), (?)', ['a', 'b']);
    expect(insert).toMatchObject({ command: 'INSERT', affected: 2, lastInsertId: 2, rows: [] });
    const update = await db.query('UPDATE items SET label = ? WHERE id > ?', ['c', 0]);
    expect(update).toMatchObject({ command: 'UPDATE', affected: 2, lastInsertId: null });
    const select = await db.query('SELECT id, label FROM items ORDER BY id');
    expect(select.command).toBe('SELECT');
    expect(select.fields.map((field) => field.name)).toEqual(['id', 'label']);
    expect(select.fields[0]!.typeOid).toBe(0);
    const returning = await db.query('INSERT INTO items (label) VALUES (?) RETURNING id, label', ['d']);
    expect(returning).toMatchObject({ command: 'INSERT', affected: 1, lastInsertId: 3, rows: [{ id: 3, label: 'd' }] });
    const ddl = await db.query('CREATE TABLE other (x)');
    expect(ddl).toMatchObject({ command: 'CREATE', affected: 0, lastInsertId: null });
  });

  it('errors carry the extended SQLite code, retryable only for contention, and the caller stack', async () => {
    const { db } = temp;
    await db.query('CREATE UNIQUE INDEX items_label ON items (label)');
    await db.query('INSERT INTO items (label) VALUES (?)', ['dup']);
    const duplicate = async function insertTheDuplicate(): Promise<unknown> {
      try {
        return await db.query('INSERT INTO items (label) VALUES (?)', ['dup']);
      } catch (error) {
        return error;
      }
    };
    const error = (await duplicate()) as DbError;
    expect(error).toBeInstanceOf(DbError);
    expect(error.code).toBe('DB_QUERY_FAILED');
    expect(error.sqliteCode).toBe('SQLITE_CONSTRAINT_UNIQUE');
    expect(error.retryable).toBe(false);
    expect(error.connection).toEqual({ backend: 'sqlite', host: temp.file });
    expect(error.params).toBeUndefined();
    expect(error.callerStack).toContain('insertTheDuplicate');
    expect(error.callerStack).toContain('basics.test.ts');
    expect(error.callerStack).not.toContain('src/data/sqlite/');
    const syntax = (await db.query('SELEKT 1').catch((e: unknown) => e)) as DbError;
    expect(syntax.sqliteCode).toBe('SQLITE_ERROR');
    expect(syntax.message).toMatch(/syntax error/);
    const debug = (await db.query('INSERT INTO items (label) VALUES (?)', ['dup'], { debug: true }).catch((e: unknown) => e)) as DbError;
    expect(debug.params).toEqual(['dup']);
  });

  it('caps rows per query at maxRows (default 10,000) with TooManyRows', async () => {
    const { db } = temp;
    await db.query('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10001) INSERT INTO items (n) SELECT i FROM n');
    const error = (await db.query('SELECT * FROM items').catch((e: unknown) => e)) as TooManyRows;
    expect(error).toBeInstanceOf(TooManyRows);
    expect(error.maxRows).toBe(10_000);
    expect((await db.query('SELECT * FROM items LIMIT 10000')).rows).toHaveLength(10_000);
    await expect(db.query('SELECT * FROM items', [], undefined, { maxRows: 5 })).rejects.toThrow(/more than 5 rows/);
    // A write that returns too many rows is undone, not applied and then reported.
    await expect(db.query('UPDATE items SET label = ? RETURNING id', ['x'], undefined, { maxRows: 10 })).rejects.toThrow(TooManyRows);
    expect((await db.query('SELECT count(*) AS n FROM items WHERE label = ?', ['x'])).rows[0]!.n).toBe(0);
    await expect(db.query('SELECT 1', [], undefined, { maxRows: -1 })).rejects.toMatchObject({ option: 'maxRows' });
  });
});

describe('many statements', () => {
  it('runs 10,000 sequential statements', async () => {
    const { db } = temp;
    for (let i = 0; i < 5_000; i++) await db.query('INSERT INTO items (id, n) VALUES (?, ?)', [i, i * 2]);
    let sum = 0;
    for (let i = 0; i < 5_000; i++) sum += (await db.query<{ n: number }>('SELECT n FROM items WHERE id = ?', [i])).rows[0]!.n;
    expect(sum).toBe(5_000 * 4_999);
  });

  it('runs 128 concurrent statements, reads and writes mixed, each with its own result', async () => {
    const { db } = temp;
    const writes = await Promise.all(Array.from({ length: 64 }, (_, i) => db.query('INSERT INTO items (id, label) VALUES (?, ?)', [i, `w${i}`])));
    expect(writes.map((result) => result.lastInsertId)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    const mixed = await Promise.all(
      Array.from({ length: 128 }, (_, i) =>
        i % 2 === 0 ? db.query<{ label: string }>('SELECT label FROM items WHERE id = ?', [i / 2]) : db.query('UPDATE items SET n = ? WHERE id = ?', [i, (i - 1) / 2]),
      ),
    );
    mixed.forEach((result, i) => {
      if (i % 2 === 0) expect(result.rows).toEqual([{ label: `w${i / 2}` }]);
      else expect(result.affected).toBe(1);
    });
  });

  it('a large result crosses the hop in slices under the payload cap', async () => {
    const { db } = temp;
    const text = 'x'.repeat(10_000);
    await db.query('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) INSERT INTO items (id, label) SELECT i, ? FROM n', [text]);
    // 500 rows of 10 kB, estimated at 3 bytes a character: well over the 1 MiB cap of one reply.
    const { rows } = await db.query<{ id: number; label: string }>('SELECT id, label FROM items ORDER BY id');
    expect(rows).toHaveLength(500);
    expect(rows[499]).toEqual({ id: 500, label: text });
  });

  it('prepared statements run many times and close', async () => {
    const { db } = temp;
    const insert = await db.prepare('INSERT INTO items (id, label) VALUES (?, ?)');
    for (let i = 0; i < 10; i++) await insert.query([i, `p${i}`]);
    const select = await db.prepare<{ label: string }>('SELECT label FROM items WHERE id = ?');
    expect((await select.query([3])).rows).toEqual([{ label: 'p3' }]);
    await select.close();
    expect((await select.query([4])).rows).toEqual([{ label: 'p4' }]);
    await expect(db.prepare('SELECT * FROM missing')).rejects.toMatchObject({ sqliteCode: 'SQLITE_ERROR' });
  });

  it('ping, health, and PoolClosed after close', async () => {
    const { db } = temp;
    await db.ping();
    expect(db.health()).toMatchObject({ healthy: true, connections: 3, waiting: 0 });
    await db.close();
    expect(db.health()).toMatchObject({ healthy: false, reason: 'closed' });
    await expect(db.query('SELECT 1')).rejects.toThrow(PoolClosed);
    await expect(db.query('INSERT INTO items (label) VALUES (1)')).rejects.toThrow(PoolClosed);
    await expect(db.transaction(async () => 1)).rejects.toThrow(PoolClosed);
  });
});
