/**
 * What pg and postgres.js users pass: a connection URL (with sslmode), `DATABASE_URL`, the `PG*`
 * variables, and the precedence between them and the object's fields. Real servers: the
 * machine's (trust auth) and a throwaway SCRAM + TLS cluster.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../src/actors/index.js';
import { ConnectFailed } from '../../src/data/index.js';
import { createPostgresPool, type PostgresDatabase, type PostgresPoolConfig } from '../../src/data/postgres.js';
import { parsePostgresUrl, postgresConfig } from '../../src/data/postgres-config.js';
import { startCluster, type Cluster } from '../support/pg-cluster.js';
import { freshDatabase, PG_HOST, PG_PORT, PG_USER, psql, type FreshDatabase } from '../support/pg.js';
import { testSystem } from '../support/systems.js';

let fresh: FreshDatabase;
let cluster: Cluster;
let system: ActorSystem;
let certDir: string;
const opened: PostgresDatabase[] = [];

beforeAll(async () => {
  fresh = freshDatabase('poolurl');
  cluster = await startCluster({ tls: true });
  certDir = mkdtempSync(join(tmpdir(), 'molo-pool-url-'));
  writeFileSync(join(certDir, 'root.crt'), cluster.caCert!);
}, 60_000);
afterAll(async () => {
  fresh?.drop();
  await cluster?.stop();
  rmSync(certDir, { recursive: true, force: true });
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
  await system?.shutdown();
});

async function open(config?: PostgresPoolConfig | string): Promise<PostgresDatabase> {
  const db = await createPostgresPool(system, config);
  opened.push(db);
  return db;
}

async function whoAmI(db: PostgresDatabase): Promise<{ db: string; app: string; ssl: boolean }> {
  const result = await db.query<{ db: string; app: string; ssl: boolean }>(
    "SELECT current_database() AS db, current_setting('application_name') AS app, coalesce((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false) AS ssl",
  );
  return result.rows[0]!;
}

describe('postgresConfig: where each field comes from', () => {
  it('parses a URL: user, password, host, port, database, percent-encoding, libpq parameters', () => {
    expect(parsePostgresUrl('postgres://al%40ice:p%3Ass@db.example:6543/my%20db?application_name=app&connect_timeout=3')).toEqual({
      user: 'al@ice',
      password: 'p:ss',
      host: 'db.example',
      port: 6543,
      database: 'my db',
      applicationName: 'app',
      connectTimeoutMs: 3_000,
    });
    expect(parsePostgresUrl('postgresql:///app?host=/var/run/postgresql')).toEqual({ host: '/var/run/postgresql', database: 'app' });
    expect(parsePostgresUrl('postgres://%2Ftmp%2Fsock/app')).toEqual({ host: '/tmp/sock', database: 'app' });
    expect(parsePostgresUrl('postgres://u@[::1]:5433/d')).toMatchObject({ host: '::1', port: 5433 });
    expect(parsePostgresUrl('postgres://u@h/d?sslmode=disable').ssl).toBe(false);
    expect(parsePostgresUrl('postgres://u@h/d?sslmode=prefer').ssl).toBe(false);
    expect(parsePostgresUrl('postgres://u@h/d?sslmode=require').ssl).toEqual({ rejectUnauthorized: false });
    expect(parsePostgresUrl('postgres://u@h/d?sslmode=verify-full').ssl).toEqual({});
  });

  it('precedence: object field > URL (or DATABASE_URL) > PG* variables > defaults', () => {
    const env = { PGHOST: 'env-host', PGPORT: '7000', PGUSER: 'env-user', PGDATABASE: 'env-db', PGPASSWORD: 'env-pw', DATABASE_URL: 'postgres://durl-user@durl-host/durl-db' };
    // DATABASE_URL over PG*, PG* fills what it leaves out.
    expect(postgresConfig({ env })).toMatchObject({ host: 'durl-host', port: 7000, user: 'durl-user', database: 'durl-db', password: 'env-pw' });
    // An explicit url replaces DATABASE_URL; the object's fields beat both.
    expect(postgresConfig({ env, url: 'postgres://url-user@url-host:1234/url-db', database: 'obj-db' })).toMatchObject({
      host: 'url-host',
      port: 1234,
      user: 'url-user',
      database: 'obj-db',
    });
    // An object naming a host ignores DATABASE_URL (it names another server) but still takes PG* for the rest.
    expect(postgresConfig({ env, host: 'obj-host' })).toMatchObject({ host: 'obj-host', port: 7000, user: 'env-user', database: 'env-db' });
    // env: false reads nothing: the defaults remain (the user falls back to the OS user).
    const bare = postgresConfig({ env: false });
    expect(bare.host).toBeUndefined();
    expect(typeof bare.user).toBe('string');
    // Pool options pass through untouched.
    expect(postgresConfig({ env: false, url: 'postgres://u@h/d', max: 3 })).toMatchObject({ max: 3, user: 'u' });
    expect(postgresConfig({ env: { PGSSLMODE: 'require' }, host: 'h' }).ssl).toEqual({ rejectUnauthorized: false });
  });
});

describe('createPostgresPool from a URL and the environment (real servers)', () => {
  it('a postgres:// URL string', async () => {
    system = testSystem();
    const db = await open(`postgres://${PG_USER}@${PG_HOST}:${PG_PORT}/${fresh.database}?application_name=from-url&sslmode=disable`);
    expect(await whoAmI(db)).toEqual({ db: fresh.database, app: 'from-url', ssl: false });
  });

  it('the PG* variables, and DATABASE_URL, when the config names no server', async () => {
    system = testSystem();
    const byPg = await open({ env: { PGHOST: PG_HOST, PGPORT: String(PG_PORT), PGUSER: PG_USER, PGDATABASE: fresh.database, PGAPPNAME: 'from-pg-env' }, max: 2 });
    expect(await whoAmI(byPg)).toMatchObject({ db: fresh.database, app: 'from-pg-env' });
    const byUrl = await open({ env: { DATABASE_URL: `postgresql://${PG_USER}@${PG_HOST}:${PG_PORT}/${fresh.database}?application_name=from-database-url` } });
    expect(await whoAmI(byUrl)).toMatchObject({ db: fresh.database, app: 'from-database-url' });
  });

  it('no config at all reads process.env (DATABASE_URL)', async () => {
    system = testSystem();
    const saved = process.env['DATABASE_URL'];
    process.env['DATABASE_URL'] = `postgres://${PG_USER}@${PG_HOST}:${PG_PORT}/${fresh.database}?application_name=from-process-env`;
    try {
      const db = await open();
      expect(await whoAmI(db)).toMatchObject({ db: fresh.database, app: 'from-process-env' });
    } finally {
      if (saved === undefined) delete process.env['DATABASE_URL'];
      else process.env['DATABASE_URL'] = saved;
    }
    expect(Number(psql(`SELECT count(*) FROM pg_database WHERE datname = '${fresh.database}'`))).toBe(1);
  });

  it('sslmode=require and verify-full with sslrootcert over TLS, SCRAM password in the URL', async () => {
    system = testSystem();
    const { name, password } = cluster.users.superuser;
    const base = `postgres://${encodeURIComponent(name)}:${encodeURIComponent(password)}@localhost:${cluster.port}/postgres`;
    const required = await open(`${base}?sslmode=require`);
    expect((await whoAmI(required)).ssl).toBe(true);
    const verified = await open(`${base}?sslmode=verify-full&sslrootcert=${encodeURIComponent(join(certDir, 'root.crt'))}`);
    expect((await whoAmI(verified)).ssl).toBe(true);
    // verify-full without the root certificate: the self-signed certificate is refused, and the error says so.
    await expect(open({ url: `${base}?sslmode=verify-full`, acquireTimeoutMs: 300, env: false }).then((db) => db.ready({ timeoutMs: 300 }))).rejects.toSatisfy(
      (error: unknown) => error instanceof ConnectFailed && /certificate/i.test((error as Error).message),
    );
  });
});
