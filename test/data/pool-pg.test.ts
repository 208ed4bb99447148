/**
 * The Postgres pool through the real server (validation steps 1-4 of 04-data.md): throughput,
 * exhaustion failing fast, idle eviction, lifetimes, the health probe, a backend terminated
 * mid-query, LISTEN resumed after a reconnect, pinned sessions and serialization failures.
 */
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ActorSystem, Ref } from '../../src/actors/index.js';
import { Supervisor } from '../../src/behaviours/index.js';
import {
  AcquireTimeout,
  ConnectionLost,
  DbError,
  PoolExhausted,
  StatementTimeout,
  type Database,
} from '../../src/data/index.js';
import { createPostgresPool, type PostgresDatabase, type PostgresPoolConfig } from '../../src/data/postgres.js';
import { freshDatabase, psql, type FreshDatabase } from '../support/pg.js';
import { eventually, sleep, testSystem } from '../support/systems.js';

let fresh: FreshDatabase;
let system: ActorSystem;
const opened: Database[] = [];

beforeAll(() => {
  fresh = freshDatabase('pool');
  psql('CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)', fresh.database);
});
afterAll(() => fresh.drop());
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
  await system?.shutdown();
});

async function open(config: Partial<PostgresPoolConfig> = {}): Promise<PostgresDatabase> {
  system = testSystem();
  const db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, ...config });
  opened.push(db);
  return db;
}

const backends = (applicationName: string): number =>
  Number(psql(`SELECT count(*) FROM pg_stat_activity WHERE application_name = '${applicationName}'`));

describe('Postgres pool', () => {
  it('runs 10k sequential and 128 concurrent statements', async () => {
    const db = await open({ max: 4 });
    let sum = 0;
    for (let i = 0; i < 10_000; i++) sum += (await db.query<{ n: number }>('SELECT $1::int AS n', [i])).rows[0]!.n;
    expect(sum).toBe((9_999 * 10_000) / 2);
    const results = await Promise.all(Array.from({ length: 128 }, (_, i) => db.query<{ n: number }>('SELECT $1::int + 1 AS n', [i])));
    expect(results.map((r) => r.rows[0]!.n)).toEqual(Array.from({ length: 128 }, (_, i) => i + 1));
  });

  it('its connections are actors under the pool supervisor', async () => {
    const db = await open({ min: 2, max: 4 });
    await eventually(() => db.health().connections === 2, 5_000, 'two connections');
    const children = await Supervisor.whichChildren(system, db.supervisor);
    expect(children).toHaveLength(2);
    expect(db.health()).toMatchObject({ healthy: true, connections: 2 });
  });

  it('fails fast with PoolExhausted when maxWaiters callers already wait, and counts it', async () => {
    const metrics = new Registry();
    const db = await open({ min: 1, max: 1, maxWaiters: 2, acquireTimeoutMs: 10_000, metrics });
    let release!: () => void;
    const held = db.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    await eventually(() => release !== undefined, 5_000, 'transaction started');
    const waiting = [db.transaction(async () => 1), db.transaction(async () => 2)];
    const started = Date.now();
    await expect(db.transaction(async () => 3)).rejects.toBeInstanceOf(PoolExhausted);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await metrics.getSingleMetricAsString('molo_pool_exhausted_total')).toMatch(/molo_pool_exhausted_total\{pool="\w+"\} 1/);
    release();
    await held;
    expect(await Promise.all(waiting)).toEqual([1, 2]);
  });

  it('a checkout that waits longer than acquireTimeoutMs fails with AcquireTimeout', async () => {
    const db = await open({ min: 1, max: 1, acquireTimeoutMs: 200 });
    let release!: () => void;
    const held = db.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    await eventually(() => release !== undefined, 5_000, 'transaction started');
    await expect(db.transaction(async () => undefined)).rejects.toBeInstanceOf(AcquireTimeout);
    release();
    await held;
  });

  it('closes idle connections above min after idleTimeoutMs', async () => {
    const db = await open({ min: 1, max: 4, idleTimeoutMs: 300, reapIntervalMs: 50, applicationName: 'molo_idle_test' });
    // Four transactions at once need four connections.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const txs = Array.from({ length: 4 }, () => db.transaction(() => gate));
    await eventually(() => db.health().connections === 4, 5_000, 'four connections');
    expect(backends('molo_idle_test')).toBe(4);
    release();
    await Promise.all(txs);
    await eventually(() => db.health().connections === 1, 5_000, 'evicted down to min');
    await eventually(() => backends('molo_idle_test') === 1, 5_000, 'server sees one backend');
  });

  it('replaces a connection once it is older than maxLifetimeMs', async () => {
    const db = await open({ min: 1, max: 1, maxLifetimeMs: 300, reapIntervalMs: 50 });
    const pid = async (): Promise<number> => (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const first = await pid();
    await sleep(500);
    await eventually(() => db.health().connections === 1, 5_000, 'replacement open');
    expect(await pid()).not.toBe(first);
  });

  it('probes a connection idle past probeAfterIdleMs before handing it out', async () => {
    const db = await open({ min: 1, max: 1, probeAfterIdleMs: 100, idleTimeoutMs: 60_000 });
    const pid = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    await sleep(150);
    // Killed behind the pool's back while idle: without the probe the next statement would fail.
    psql(`SELECT pg_terminate_backend(${pid})`);
    await sleep(150);
    const next = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    expect(next).not.toBe(pid);
  });

  it('a burst after an idle spell runs pipelined on the probed connections, without filling the checkout queue', async () => {
    // Regression: shared() refused every connection idle past probeAfterIdleMs, so each statement of
    // the burst queued for a checkout and the 257th failed with PoolExhausted.
    const db = await open({ min: 2, max: 2, probeAfterIdleMs: 100, maxWaiters: 8, acquireTimeoutMs: 10_000 });
    await eventually(() => db.health().connections === 2, 5_000, 'two connections');
    await sleep(250);
    const results = await Promise.all(Array.from({ length: 400 }, (_, i) => db.query<{ n: number }>('SELECT $1::int AS n', [i])));
    expect(results.map((r) => r.rows[0]!.n)).toEqual(Array.from({ length: 400 }, (_, i) => i));
    expect(db.health()).toMatchObject({ healthy: true, waiting: 0 });
  });

  it('a burst after an idle spell skips a connection that died while idle', async () => {
    const db = await open({ min: 1, max: 1, probeAfterIdleMs: 100, maxWaiters: 8 });
    const pid = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    await sleep(150);
    psql(`SELECT pg_terminate_backend(${pid})`);
    await sleep(150);
    const pids = await Promise.all(Array.from({ length: 100 }, () => db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')));
    for (const r of pids) expect(r.rows[0]!.pid).not.toBe(pid);
  });

  it('a backend terminated mid-query fails the read as retryable and the pool recovers', async () => {
    const db = await open({ min: 1, max: 2 });
    const pid = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const slow = db.query('SELECT pg_sleep(10)');
    await sleep(200);
    psql(`SELECT pg_terminate_backend(${pid})`);
    const error = await slow.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConnectionLost);
    expect((error as DbError).retryable).toBe(true);
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await eventually(() => db.health().healthy, 5_000, 'healthy again');
  });

  it('statement timeout from the context cancels the statement', async () => {
    const db = await open({ min: 1, max: 1 });
    await expect(db.query('SELECT pg_sleep(5)', [], { timeoutMs: 200 })).rejects.toBeInstanceOf(StatementTimeout);
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('a pinned session keeps its session state, which never leaks to the shared connections', async () => {
    const db = await open({ min: 1, max: 1 });
    const inside = await db.session(async (session) => {
      await session.query("SET application_name = 'pinned'");
      return (await session.query<{ name: string }>("SELECT current_setting('application_name') AS name")).rows[0]!.name;
    });
    expect(inside).toBe('pinned');
    const after = (await db.query<{ name: string }>("SELECT current_setting('application_name') AS name")).rows[0]!.name;
    expect(after).not.toBe('pinned');
  });

  it('serialization failures surface as retryable 40001 and are not retried by the layer', async () => {
    const db = await open({ min: 2, max: 2 });
    await db.query('INSERT INTO accounts (id, balance) VALUES (1, 100), (2, 100) ON CONFLICT (id) DO UPDATE SET balance = 100');
    let attempts = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = db.transaction(
      async (tx) => {
        attempts++;
        await tx.query('SELECT sum(balance) FROM accounts');
        await tx.query('UPDATE accounts SET balance = balance - 10 WHERE id = 1');
        await gate;
      },
      { isolation: 'serializable' },
    );
    const second = db.transaction(
      async (tx) => {
        await tx.query('SELECT sum(balance) FROM accounts');
        await tx.query('UPDATE accounts SET balance = balance - 10 WHERE id = 2');
      },
      { isolation: 'serializable' },
    );
    await second;
    release();
    const error = await first.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DbError);
    expect((error as DbError).sqlstate).toBe('40001');
    expect((error as DbError).retryable).toBe(true);
    expect(attempts).toBe(1);
  });

  it('LISTEN resumes after the listening connection is lost, and the resync hook runs', async () => {
    const db = await open({ min: 1, max: 3 });
    const received: string[] = [];
    let resyncs = 0;
    await db.listen('molo_events', (payload) => received.push(payload), { onResync: () => void resyncs++ });
    await db.notify('molo_events', 'before');
    await eventually(() => received.includes('before'), 5_000, 'first notification');
    const listenerPid = psql(`SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = '${fresh.database}'`);
    expect(listenerPid).toMatch(/^\d+$/);
    psql(`SELECT pg_terminate_backend(${listenerPid})`);
    await eventually(() => resyncs === 1, 10_000, 'resync after reconnect');
    await db.notify('molo_events', 'after');
    await eventually(() => received.includes('after'), 5_000, 'notification after reconnect');
  });

  it('LISTEN recovery driven by its child in the tree: killed, the child is restarted, and the next lost connection is recovered by the new actor', async () => {
    const db = await open({ min: 1, max: 3 });
    const root = await Supervisor.start(system, { strategy: 'one_for_one', children: [db.listenerChild()] });
    const received: string[] = [];
    let resyncs = 0;
    await db.listen('molo_child_events', (payload) => received.push(payload), { onResync: () => void resyncs++ });
    const [child] = await Supervisor.whichChildren(system, root);
    expect(child).toMatchObject({ id: 'pg-listener', type: 'worker' });
    const first = child!.ref as Ref;
    system.exit(first, 'kill');
    let second: Ref | undefined;
    await eventually(() => !system.isAlive(first), 5_000, 'killed');
    for (let i = 0; i < 100 && (second === undefined || second === first); i++) {
      await sleep(20);
      const [again] = await Supervisor.whichChildren(system, root);
      second = typeof again?.ref === 'object' && system.isAlive(again.ref) ? again.ref : undefined;
    }
    expect(second).toBeDefined();
    expect(second).not.toBe(first);

    const listenerPid = psql(`SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%molo_child_events%' AND datname = '${fresh.database}'`);
    psql(`SELECT pg_terminate_backend(${listenerPid})`);
    await eventually(() => resyncs === 1, 10_000, 'resync after reconnect, by the restarted actor');
    await db.notify('molo_child_events', 'after');
    await eventually(() => received.includes('after'), 5_000, 'notification after reconnect');
    await Supervisor.stop(system, root);
  });

  it('a temporary listener child killed and not restarted leaves a lost LISTEN unrecovered: the actor is what retries', async () => {
    const db = await open({ min: 1, max: 3 });
    const root = await Supervisor.start(system, { strategy: 'one_for_one', children: [{ ...db.listenerChild(), restart: 'temporary' }] });
    let resyncs = 0;
    await db.listen('molo_orphan_events', () => undefined, { onResync: () => void resyncs++ });
    const [child] = await Supervisor.whichChildren(system, root);
    system.exit(child!.ref as Ref, 'kill');
    await eventually(() => !system.isAlive(child!.ref as Ref), 5_000, 'killed');
    const listenerPid = psql(`SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%molo_orphan_events%' AND datname = '${fresh.database}'`);
    psql(`SELECT pg_terminate_backend(${listenerPid})`);
    await sleep(1_000);
    expect(resyncs).toBe(0);
    // Placed again, a driver takes the retries up.
    const again = await Supervisor.startChild(system, root, { ...db.listenerChild('pg-listener-2') });
    expect(again).toBeDefined();
    await eventually(() => resyncs === 1, 10_000, 'resync once a driver is back');
    await Supervisor.stop(system, root);
  });
});
