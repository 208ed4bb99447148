/**
 * A pool's failures say why, through real servers: a port nobody listens on, a missing database,
 * a malformed configuration (the machine's trust-auth server), and a wrong password (a throwaway
 * SCRAM cluster). Before: each surfaced as AcquireTimeout after 5 s with the reason two causes
 * deep; now the reason is the error's own code and message, and what no retry fixes fails at once.
 */
import { createConnection, createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../src/actors/index.js';
import { AcquireTimeout, AuthFailed, ConnectFailed, DbError, InvalidDataConfig, PoolClosed } from '../../src/data/index.js';
import { createPostgresPool, type PostgresDatabase, type PostgresPoolConfig } from '../../src/data/postgres.js';
import { startCluster, type Cluster } from '../support/pg-cluster.js';
import { freshDatabase, PG_HOST, PG_PORT, PG_USER, type FreshDatabase } from '../support/pg.js';
import { testSystem } from '../support/systems.js';

let fresh: FreshDatabase;
let cluster: Cluster;
let system: ActorSystem;
const opened: PostgresDatabase[] = [];

beforeAll(async () => {
  fresh = freshDatabase('poolfail');
  cluster = await startCluster();
  await cluster.psql("CREATE ROLE app LOGIN PASSWORD 'right-password'");
}, 60_000);
afterAll(async () => {
  fresh?.drop();
  await cluster?.stop();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
  await system?.shutdown();
});

async function open(config: PostgresPoolConfig | string): Promise<PostgresDatabase> {
  const db = await createPostgresPool(system, config);
  opened.push(db);
  return db;
}

/** Rejection of `promise` and how long it took. */
async function timedRejection(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  try {
    await promise;
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
  throw new Error('expected a rejection');
}

/** A port that was free a moment ago: nothing listens on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A TCP server that forwards each connection to the machine's Postgres (not listening yet). */
function forwarder(): Server {
  return createServer((client) => {
    const upstream = createConnection(PG_PORT, PG_HOST);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
}

describe('pool failures that say why', () => {
  it('a server that is down: the query fails with ConnectFailed naming the refusal, and ready() says it too', async () => {
    system = testSystem();
    const port = await closedPort();
    const db = await open({ host: '127.0.0.1', port, user: 'postgres', env: false, acquireTimeoutMs: 400, reconnectInitialMs: 20 });
    expect(db.health()).toMatchObject({ healthy: false });
    const { error, ms } = await timedRejection(db.query('SELECT 1'));
    expect(error).toBeInstanceOf(ConnectFailed);
    expect((error as ConnectFailed).code).toBe('DB_CONNECT_FAILED');
    expect((error as ConnectFailed).retryable).toBe(true);
    expect((error as Error).message).toMatch(/no connection after 400 ms .*last attempt: connect ECONNREFUSED 127\.0\.0\.1:\d+/);
    expect(ms).toBeLessThan(3_000);
    const ready = await timedRejection(db.ready({ timeoutMs: 200 }));
    expect(ready.error).toBeInstanceOf(ConnectFailed);
    expect((ready.error as Error).message).toMatch(/ECONNREFUSED/);
  });

  it('ready() resolves once the server comes up', async () => {
    system = testSystem();
    const port = await closedPort();
    const db = await open({ host: '127.0.0.1', port, user: 'postgres', env: false, reconnectInitialMs: 20, reconnectMaxMs: 50 });
    // A stand-in that forwards to the real server: "the server comes up" without restarting it.
    const proxy = forwarder();
    const waiting = db.ready({ timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    try {
      await waiting;
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
    } finally {
      await db.close();
      proxy.close();
    }
  });

  it('a busy pool that cannot open another connection says why in its AcquireTimeout', async () => {
    system = testSystem();
    const proxy = forwarder();
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    const db = await open({ host: '127.0.0.1', port, user: PG_USER, database: fresh.database, env: false, min: 1, max: 2, acquireTimeoutMs: 500, reconnectInitialMs: 20 });
    await db.ready();
    // The server "goes away" for new connections; the open one keeps working.
    proxy.close();
    let release!: () => void;
    const held = db.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { error } = await timedRejection(db.transaction(async () => 1));
    expect(error).toBeInstanceOf(AcquireTimeout);
    expect((error as Error).message).toMatch(/no connection within 500 ms \(pool\.acquireTimeoutMs\); last connect attempt failed: connect failed: connect ECONNREFUSED/);
    release();
    await held;
    await db.close();
  });

  it('a missing database fails at once (not retryable), and ready() on a closed pool says PoolClosed', async () => {
    system = testSystem();
    const { error, ms } = await timedRejection(open({ host: PG_HOST, port: PG_PORT, user: PG_USER, database: 'molo_no_such_database', env: false }));
    expect(error).toBeInstanceOf(ConnectFailed);
    expect(error).toMatchObject({ code: 'DB_CONNECT_FAILED', sqlstate: '3D000', retryable: false });
    expect((error as Error).message).toMatch(/database "molo_no_such_database" does not exist/);
    // Before: 5 s (the acquire timeout). Generous bound: well below it.
    expect(ms).toBeLessThan(2_500);
    expect(system.registered().filter((name) => name.startsWith('molo.pool.'))).toEqual([]);
  });

  it('a wrong password fails at once with AuthFailed (SCRAM cluster)', async () => {
    system = testSystem();
    const { error, ms } = await timedRejection(
      open({ host: cluster.host, port: cluster.port, user: 'app', password: 'wrong-password', database: 'postgres', env: false }),
    );
    expect(error).toBeInstanceOf(AuthFailed);
    expect(error).toMatchObject({ code: 'DB_AUTH_FAILED', retryable: false });
    expect((error as Error).message).toMatch(/password authentication failed for user "app"/);
    expect((error as Error).message).not.toMatch(/wrong-password/);
    expect(ms).toBeLessThan(2_500);
  });

  it('a password changed under a running pool: the next checkout that needs a new connection fails at once with AuthFailed', async () => {
    system = testSystem();
    await cluster.psql("ALTER ROLE app PASSWORD 'right-password'");
    const db = await open({ host: cluster.host, port: cluster.port, user: 'app', password: 'right-password', database: 'postgres', env: false, min: 1, max: 2, acquireTimeoutMs: 5_000 });
    await db.ready();
    let release!: () => void;
    const held = db.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await cluster.psql("ALTER ROLE app PASSWORD 'rotated'");
    const { error, ms } = await timedRejection(db.transaction(async () => 1));
    expect(error).toBeInstanceOf(AuthFailed);
    expect(ms).toBeLessThan(2_500);
    release();
    await held;
    await cluster.psql("ALTER ROLE app PASSWORD 'right-password'");
  });

  it('a malformed configuration is refused before anything starts, naming the field', async () => {
    system = testSystem();
    const cases: [unknown, string][] = [
      [{ host: PG_HOST, port: 'abc', user: PG_USER, env: false }, 'pg.port'],
      [{ host: PG_HOST, port: PG_PORT, user: PG_USER, max: 0, env: false }, 'pool.max'],
      [{ host: PG_HOST, port: PG_PORT, user: PG_USER, min: 5, max: 2, env: false }, 'pool.min'],
      [{ hostname: PG_HOST, user: PG_USER, env: false }, 'pool.hostname'],
      [{ host: PG_HOST, port: PG_PORT, user: '', env: false }, 'pg.user'],
      [{ url: 'mysql://root@localhost/db', env: false }, 'pg.url'],
      [{ url: 'postgres://u@h/db?sslmode=sometimes', env: false }, 'pg.url parameter sslmode'],
      [{ url: 'postgres://u@h/db?search_path=x', env: false }, 'pg.url parameter search_path'],
      [{ url: 'postgres://u@h1,h2/db', env: false }, 'pg.url'],
      [{ user: PG_USER, env: { PGPORT: 'five' } }, 'PGPORT'],
      [{ env: { DATABASE_URL: 'postgres://u:p@h:99999/db' } }, 'DATABASE_URL'],
      ['not a url', 'pg.url'],
      [42, 'pg'],
    ];
    for (const [config, option] of cases) {
      const { error, ms } = await timedRejection(createPostgresPool(system, config as PostgresPoolConfig));
      expect(error, JSON.stringify(config)).toBeInstanceOf(InvalidDataConfig);
      expect((error as InvalidDataConfig).option, JSON.stringify(config)).toBe(option);
      expect((error as DbError).code).toBe('DB_INVALID_CONFIG');
      expect(ms).toBeLessThan(1_000);
    }
    expect((await timedRejection(createPostgresPool(system, { hostname: 'x' } as never))).error).toMatchObject({ message: /did you mean host\?/ });
    // Nothing was started: no pool supervisor is left registered.
    expect(system.registered().filter((name) => name.startsWith('molo.pool.'))).toEqual([]);
    // A secret in a bad URL is never echoed.
    const leaked = await timedRejection(createPostgresPool(system, 'postgres://u:s3cret@h:99999/db'));
    expect((leaked.error as Error).message).not.toMatch(/s3cret/);
  });

  it('ready() of a closed pool rejects with PoolClosed', async () => {
    system = testSystem();
    const db = await open({ host: PG_HOST, port: PG_PORT, user: PG_USER, database: fresh.database, env: false });
    await db.ready();
    await db.close();
    await expect(db.ready()).rejects.toBeInstanceOf(PoolClosed);
  });
});
