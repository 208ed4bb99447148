/**
 * The tenant selector (`ctx.database`), on real Postgres databases and real SQLite files. Probe
 * before: a query with `ctx.database` naming tenant B ran on tenant A's pool and answered A's
 * data. Now a plain pool refuses it (DatabaseNotRouted), and `openTenantDatabases` routes each call
 * to the pool of its database, at most `maxOpen` at once, closing the least recently used idle one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorSystem } from '../../src/actors/index.js';
import { createPostgresPool, openSqlite, openTenantDatabases, type Database, type PostgresDatabase } from '../../src/data/index.js';
import { freshDatabase, type FreshDatabase } from '../support/pg.js';

let system: ActorSystem;
const tenants: FreshDatabase[] = [];
let dir: string;

beforeAll(() => {
  system = new ActorSystem({ node: 'tenants', logger: false });
  for (const name of ['a', 'b', 'c']) {
    const fresh = freshDatabase(`tenant_${name}`);
    tenants.push(fresh);
  }
  dir = mkdtempSync(join(tmpdir(), 'molo-tenants-'));
});

afterAll(async () => {
  for (const tenant of tenants) tenant.drop();
  await system.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

const pgPool = (tenant: FreshDatabase): Promise<PostgresDatabase> =>
  createPostgresPool(system, { host: tenant.host, port: tenant.port, user: tenant.user, database: tenant.database, max: 2 });

describe('a plain pool', () => {
  it('Postgres: a call for another database is refused on every path; its own name passes', async () => {
    const [a, b] = tenants as [FreshDatabase, FreshDatabase];
    const db = await pgPool(a);
    try {
      const other = { database: b.database };
      const refused = { code: 'DB_DATABASE_NOT_ROUTED', requested: b.database, served: a.database };
      await expect(db.query('SELECT current_database() AS name', [], other)).rejects.toMatchObject(refused);
      await expect(db.ping(other)).rejects.toMatchObject(refused);
      await expect(db.transaction(async (tx) => tx.query('SELECT 1'), { ctx: other })).rejects.toMatchObject(refused);
      await expect(db.session(async (s) => s.query('SELECT 1'), other)).rejects.toMatchObject(refused);
      await expect(db.queryMany('SELECT $1::int', [[1]], other)).rejects.toMatchObject(refused);
      await expect((async () => {
        for await (const _ of db.stream('SELECT 1', [], other));
      })()).rejects.toMatchObject(refused);
      const own = await db.query<{ name: string }>('SELECT current_database() AS name', [], { database: a.database });
      expect(own.rows[0]!.name).toBe(a.database);
    } finally {
      await db.close();
    }
  });

  it('SQLite: its name, path or file name pass; another database is refused', async () => {
    const db = await openSqlite(system, { file: join(dir, 'alpha.db'), readers: 0 });
    try {
      await expect(db.query('SELECT 1', [], { database: 'beta' })).rejects.toMatchObject({ code: 'DB_DATABASE_NOT_ROUTED', requested: 'beta' });
      await expect(db.transaction(async () => 1, { ctx: { database: 'beta' } })).rejects.toMatchObject({ code: 'DB_DATABASE_NOT_ROUTED' });
      for (const name of ['alpha', 'alpha.db', join(dir, 'alpha.db')]) await expect(db.query('SELECT 1 AS one', [], { database: name })).resolves.toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await db.close();
    }
  });
});

describe('openTenantDatabases', () => {
  it('routes each call to its tenant database (Postgres), with per-tenant data kept apart', async () => {
    const byName = new Map(tenants.map((t) => [t.database, t]));
    const registry = new Registry();
    const router = openTenantDatabases({ backend: 'postgres', open: (name) => pgPool(byName.get(name)!), allow: (name) => byName.has(name), metrics: registry });
    try {
      for (const t of tenants) {
        await router.query('CREATE TABLE IF NOT EXISTS owner (name text)', [], { database: t.database });
        await router.query('INSERT INTO owner VALUES ($1)', [t.database], { database: t.database });
      }
      for (const t of tenants) {
        const rows = await router.query<{ name: string; db: string }>('SELECT name, current_database() AS db FROM owner', [], { database: t.database });
        expect(rows.rows).toEqual([{ name: t.database, db: t.database }]);
      }
      await router.transaction(async (tx) => tx.query('INSERT INTO owner VALUES ($1)', ['second']), { ctx: { database: tenants[1]!.database } });
      expect((await router.query('SELECT count(*)::int AS n FROM owner', [], { database: tenants[1]!.database })).rows[0]).toEqual({ n: 2 });
      expect((await router.query('SELECT count(*)::int AS n FROM owner', [], { database: tenants[0]!.database })).rows[0]).toEqual({ n: 1 });
      expect(router.health()).toMatchObject({ healthy: true });
      expect(await registry.getSingleMetricAsString('molo_tenant_pools_open')).toContain('molo_tenant_pools_open 3');
      // No selector and no default: refused, never run on some tenant's pool.
      await expect(router.query('SELECT 1')).rejects.toMatchObject({ code: 'DB_INVALID_CONFIG', option: 'ctx.database' });
      // A name the application does not allow never reaches `open`.
      await expect(router.query('SELECT 1', [], { database: 'postgres' })).rejects.toMatchObject({ code: 'DB_INVALID_CONFIG' });
      await expect(router.query('SELECT 1', [], { database: '../etc/passwd' })).rejects.toMatchObject({ code: 'DB_INVALID_CONFIG' });
    } finally {
      await router.close();
    }
  });

  it('keeps at most maxOpen pools (SQLite files): the least recently used idle one is closed; all busy is a typed error', async () => {
    const opened: string[] = [];
    const closed: string[] = [];
    const router = openTenantDatabases({
      backend: 'sqlite',
      maxOpen: 2,
      open: async (name) => {
        opened.push(name);
        const db: Database = await openSqlite(system, { file: join(dir, `${name}.db`), readers: 0 });
        const close = db.close.bind(db);
        return Object.assign(db, { close: () => (closed.push(name), close()) });
      },
    });
    try {
      await router.query('SELECT 1', [], { database: 't1' });
      await router.query('SELECT 1', [], { database: 't2' });
      await router.query('SELECT 1', [], { database: 't1' }); // t1 is now the most recent
      await router.query('SELECT 1', [], { database: 't3' }); // evicts t2, the least recent
      expect(router.open).toEqual(['t1', 't3']);
      await expect.poll(() => closed).toEqual(['t2']);
      expect(opened).toEqual(['t1', 't2', 't3']);

      // Both open pools busy (a transaction held open on each): a third tenant cannot evict either.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const busy = ['t1', 't3'].map((database) => router.transaction(async () => held, { ctx: { database } }));
      await expect(router.query('SELECT 1', [], { database: 't4' })).rejects.toMatchObject({ code: 'DB_TENANT_POOLS_EXHAUSTED', maxOpen: 2 });
      release();
      await Promise.all(busy);
      await expect(router.query('SELECT 1 AS one', [], { database: 't4' })).resolves.toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await router.close();
    }
  });

  it('refuses unknown options and an out-of-range maxOpen', () => {
    expect(() => openTenantDatabases({ backend: 'sqlite', open: async () => undefined as never, maxOpn: 3 } as never)).toThrow(/tenants\.maxOpn.*did you mean maxOpen\?/);
    expect(() => openTenantDatabases({ backend: 'sqlite', open: async () => undefined as never, maxOpen: 5_000 })).toThrow(/tenants\.maxOpen/);
  });
});
