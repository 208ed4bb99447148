/**
 * What only the SQL stores do: several stores (say, several processes) on one table share keys,
 * versions and leases, opening them at once is safe, and a store whose database is closed under it
 * stops sweeping.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimulatedClock, type ActorSystem } from '../../../src/actors/index.js';
import { createPostgresPool } from '../../../src/data/postgres.js';
import { openKv } from '../../../src/data/kv/index.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import type { Database } from '../../../src/data/index.js';
import { PG_HOST, PG_PORT, PG_USER } from '../../support/pg.js';
import { sleep, testSystem } from '../../support/systems.js';
import { BACKENDS, type OpenedBackend } from '../backends.js';

describe.each(BACKENDS)('SQL KV on $name', (backend) => {
  let system: ActorSystem;
  let opened: OpenedBackend;
  let second: Database;

  beforeEach(async () => {
    system = testSystem();
    opened = await backend.open(system);
    // A second handle on the same database, as another process would have.
    if (opened.db.backend === 'postgres') {
      const database = (await opened.db.query<{ d: string }>('SELECT current_database() AS d')).rows[0]!.d;
      second = await createPostgresPool(system, { host: PG_HOST, port: PG_PORT, user: PG_USER, database, min: 1, max: 2 });
    } else {
      second = await openSqlite(system, { file: (opened.db as unknown as { file: string }).file });
    }
  });

  afterEach(async () => {
    await second.close();
    await opened.dispose();
    system.shutdown();
  });

  it('stores opened at once on one table share keys, versions and leases', async () => {
    const [a, b] = await Promise.all([openKv(opened.db), openKv(second)]);
    const taken = await a.setIfVersion('lease', Buffer.from('a'), null, { ttlMs: 10_000 });
    expect(taken.ok).toBe(true);
    expect(await b.setIfVersion('lease', Buffer.from('b'), null, { ttlMs: 10_000 })).toEqual({ ok: false, version: taken.version });
    const next = await b.set('other', Buffer.from('x'));
    expect(next).toBeGreaterThan(taken.version!);
    expect((await a.get('other'))?.version).toBe(next);
    expect(await b.deleteIfVersion('lease', taken.version!)).toEqual({ ok: true, version: taken.version });
    expect(await a.exists('lease')).toBe(false);
    await Promise.all([a.close(), b.close()]);
  });

  it('stops sweeping once its database is closed', async () => {
    const clock = new SimulatedClock();
    const store = await openKv(second, { clock, sweepIntervalMs: 100 });
    await store.set('k', Buffer.from('x'), { ttlMs: 50 });
    expect(clock.pendingTimers).toBe(1);
    await second.close();
    clock.advance(100);
    // The tick's sweep fails at once (PoolClosed); the sweeper then stops instead of re-arming.
    expect(clock.pendingTimers).toBe(0);
    await sleep(200);
    expect(clock.pendingTimers).toBe(0);
    await store.close();
  });
});
