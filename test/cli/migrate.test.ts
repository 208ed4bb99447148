/**
 * `molo migrate status|up|new` in a real child process (through tsx), against a SQLite file and
 * the machine's Postgres.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, PG_HOST, PG_PORT, PG_USER, psql, type FreshDatabase } from '../support/pg.js';
import { runScript } from '../support/run-script.js';
import { tempDir } from '../data/orm/schema-support.js';

// Every case spawns `molo` through tsx several times: 5-10 s each on a loaded machine, hence 180 s per test.
const molo = (args: string[], env: Record<string, string> = {}) => runScript('src/cli/molo.ts', { args: ['migrate', ...args], env: { MOLO_DATABASE_URL: '', DATABASE_URL: '', ...env }, timeoutMs: 60_000 });

describe('molo migrate', () => {
  let dir: ReturnType<typeof tempDir>;
  let migrations: string;

  beforeEach(() => {
    dir = tempDir('molo-cli-migrate-');
    migrations = join(dir.path, 'migrations');
  });
  afterEach(() => dir.remove());

  it('new, status, up, status on a SQLite file; a changed file fails loudly', async () => {
    const created = await molo(['new', 'Create Users', '--dir', migrations]);
    expect(created.code).toBe(0);
    expect(created.stdout).toBe(`created ${join(migrations, '0001_create_users.sql')}\n`);
    expect(readFileSync(join(migrations, '0001_create_users.sql'), 'utf8')).toBe('');
    writeFileSync(join(migrations, '0001_create_users.sql'), "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);\nINSERT INTO users (name) VALUES ('a;b');\n");
    const pair = await molo(['new', 'add email', '--dir', migrations, '--variants']);
    expect(pair.stdout.trim().split('\n')).toEqual([`created ${join(migrations, '0002_add_email.pg.sql')}`, `created ${join(migrations, '0002_add_email.sqlite.sql')}`]);
    writeFileSync(join(migrations, '0002_add_email.pg.sql'), 'ALTER TABLE users ADD COLUMN email varchar(120);\n');
    writeFileSync(join(migrations, '0002_add_email.sqlite.sql'), 'ALTER TABLE users ADD COLUMN email TEXT;\n');
    const file = join(dir.path, 'app.db');

    const before = await molo(['status', '--dir', migrations, '--sqlite', file]);
    expect(before.code).toBe(0);
    expect(before.stdout).toBe('pending  0001_create_users\npending  0002_add_email\n2 migrations: 0 applied, 2 pending, 0 changed, 0 missing; 0 heals journaled\n');

    const up = await molo(['up', '--dir', migrations, '--sqlite', file]);
    expect(up.stderr).toBe('');
    expect(up.code).toBe(0);
    const lines = up.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^applied {2}0001_create_users {2}\(\d+ ms\) {2}\[1\/2\]$/);
    expect(lines[1]).toMatch(/^applied {2}0002_add_email {2}\(\d+ ms\) {2}\[2\/2\]$/);
    expect(lines[2]).toBe('2 migrations applied');

    const after = await molo(['status', '--dir', migrations], { MOLO_DATABASE_URL: `sqlite:${file}` });
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/^applied {2}0001_create_users {2}\d{4}-\d\d-\d\dT/m);
    expect(after.stdout).toMatch(/^2 migrations: 2 applied, 0 pending, 0 changed, 0 missing; 0 heals journaled$/m);
    expect((await molo(['up', '--dir', migrations, '--sqlite', file])).stdout).toBe('nothing to apply: the database is up to date\n');

    writeFileSync(join(migrations, '0001_create_users.sql'), 'CREATE TABLE users (id INTEGER PRIMARY KEY);\n');
    const refused = await molo(['up', '--dir', migrations, '--sqlite', file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^molo migrate: ORM_MIGRATION_CHECKSUM_MISMATCH: 1 applied migration\(s\) changed since they ran/);
    const changed = await molo(['status', '--dir', migrations, '--sqlite', file]);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/^CHANGED {2}0001_create_users {2}file edited after it was applied/m);
  }, 180_000);

  it('--json: new, status and up print JSON on stdout only', async () => {
    const created = await molo(['new', 'first', '--dir', migrations, '--json']);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({ created: [join(migrations, '0001_first.sql')] });
    writeFileSync(join(migrations, '0001_first.sql'), 'CREATE TABLE t (id INTEGER PRIMARY KEY);\n');
    const file = join(dir.path, 'json.db');
    const before = await molo(['status', '--dir', migrations, '--sqlite', file, '--json']);
    expect(before.code, before.stderr).toBe(0);
    expect(JSON.parse(before.stdout)).toMatchObject({ applied: 0, pending: 1, changed: 0, entries: [{ id: '0001_first', state: 'pending' }] });
    const up = await molo(['up', '--dir', migrations, '--sqlite', file, '--json']);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stderr).toBe('');
    expect(JSON.parse(up.stdout)).toEqual({ applied: ['0001_first'] });
    const after = await molo(['status', '--dir', migrations, '--sqlite', file, '--json']);
    expect(JSON.parse(after.stdout)).toMatchObject({ applied: 1, pending: 0, entries: [{ id: '0001_first', state: 'applied', appliedAt: expect.stringMatching(/^\d{4}-/) }] });
  }, 180_000);

  describe('on Postgres', () => {
    let fresh: FreshDatabase;
    beforeEach(() => {
      fresh = freshDatabase('cli_migrate');
    });
    afterEach(() => fresh.drop());

    it('up and status through --url and MOLO_DATABASE_URL, with the .pg.sql variant', async () => {
      await molo(['new', 'items', '--dir', migrations, '--variants']);
      writeFileSync(join(migrations, '0001_items.pg.sql'), 'CREATE TABLE items (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, tags text[] NOT NULL);\n');
      writeFileSync(join(migrations, '0001_items.sqlite.sql'), 'CREATE TABLE items (id INTEGER PRIMARY KEY, tags TEXT NOT NULL);\n');
      const url = `postgres://${fresh.user}@${fresh.host}:${fresh.port}/${fresh.database}`;
      const up = await molo(['up', '--dir', migrations, '--database-url', url]);
      expect(up.stderr).toBe('');
      expect(up.stdout).toMatch(/^applied {2}0001_items {2}\(\d+ ms\) {2}\[1\/1\]\n1 migration applied\n$/);
      expect(psql("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'items'::regclass AND attname = 'tags'", fresh.database)).toBe('text[]');
      const status = await molo(['status', '--dir', migrations], { MOLO_DATABASE_URL: url });
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/^applied {2}0001_items {2}\d{4}-/);
    }, 180_000);
  });

  it('a database it cannot use prints the real reason: server down, missing database, malformed URL', async () => {
    const down = await molo(['status', '--dir', migrations, '--url', 'postgres://postgres@127.0.0.1:1/postgres']);
    expect(down.code).toBe(1);
    // At the first failed attempt (ready()), not after the 5 s acquire timeout.
    expect(down.stderr).toMatch(/^molo migrate: DB_CONNECT_FAILED: connect failed: pool \S+ could not connect: connect ECONNREFUSED 127\.0\.0\.1:1\n$/);
    const missing = await molo(['status', '--dir', migrations], { MOLO_DATABASE_URL: `postgres://${PG_USER}@${PG_HOST}:${PG_PORT}/molo_no_such_db` });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^molo migrate: DB_CONNECT_FAILED: .*database "molo_no_such_db" does not exist\n$/);
    const malformed = await molo(['status', '--dir', migrations, '--url', 'postgres://u:s3cret@h/db?sslmode=maybe']);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/^molo migrate: DB_INVALID_CONFIG: invalid pg\.url parameter sslmode: "maybe" is not one of disable, allow/);
    expect(malformed.stderr).not.toMatch(/s3cret/);
  }, 180_000);

  it('usage errors exit 2 and print the usage', async () => {
    const none = await molo(['status', '--dir', migrations]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^molo migrate: no database: give --database-url postgres:\/\/\.\.\., --sqlite FILE, or set MOLO_DATABASE_URL/);
    const admin = await molo(['status', '--dir', migrations, '--url', 'http://127.0.0.1:9710']);
    expect(admin.code).toBe(2);
    expect(admin.stderr).toContain('an http URL is the admin surface');
    expect(none.stderr).toContain('usage: molo migrate <command>');
    const unknown = await molo(['sideways']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'sideways'/);
    const noName = await molo(['new', '--dir', migrations]);
    expect(noName.code).toBe(2);
    expect(readdirSync(dir.path)).toEqual([]);
  }, 180_000);
});
