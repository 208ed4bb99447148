/**
 * Instances sharing one Postgres (two pools, each its own instance id and oplog): V7-7's first half
 * (two concurrent writes of one versioned row: exactly one wins, the other gets ConflictError with
 * the winner's version), and the change feed carrying one instance's writes to the other's cache
 * (invalidated by row tag and by key), catching up after a pause, and flushing the cache when its
 * cursor fell behind retention.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { Cache, ConflictError, rowTag, type Database, type WriteEvent } from '../../../src/index.js';
import { defineModel, field, Orm } from '../../../src/data/orm/index.js';
import { ChangeFeed } from '../../../src/data/replication/feed.js';
import { Oplog } from '../../../src/data/replication/oplog.js';
import { createPostgresPool } from '../../../src/data/postgres.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { eventually, testSystem } from '../../support/systems.js';

const Account = defineModel('accounts', { id: field.int64().primaryKey(), balance: field.int64(), version: field.int64() }, { version: 'version', replicated: { policy: 'optimistic' } });

let system: ActorSystem;
let fresh: FreshDatabase;
let db1: Database;
let db2: Database;

beforeEach(async () => {
  system = testSystem();
  fresh = freshDatabase('repl');
  const config = { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 1, max: 4 };
  db1 = await createPostgresPool(system, config);
  db2 = await createPostgresPool(system, config);
});
afterEach(async () => {
  await db1.close();
  await db2.close();
  await system.shutdown();
  fresh.drop();
});

describe('instances on one shared Postgres', () => {
  it('V7-7: concurrent writes of one record: exactly one winner, ConflictError with its version for the other', async () => {
    const orm1 = new Orm(db1, { oplog: await Oplog.open(db1, { instance: 'p1' }) });
    const orm2 = new Orm(db2, { oplog: await Oplog.open(db2, { instance: 'p2' }) });
    await orm1.createTables(Account);
    await orm1.insert(Account, { id: 1n, balance: 100n });
    for (let round = 0; round < 10; round++) {
      const [r1, r2] = await Promise.all([orm1.find(Account, 1n), orm2.find(Account, 1n)]);
      const outcomes = await Promise.allSettled([orm1.update(Account, r1!, { balance: r1!.balance + 1n }), orm2.update(Account, r2!, { balance: r2!.balance - 1n })]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
      expect(won).toHaveLength(1);
      expect(lost[0]!.reason).toBeInstanceOf(ConflictError);
      const winner = (won[0] as PromiseFulfilledResult<{ version: bigint }>).value;
      expect(lost[0]!.reason).toMatchObject({ code: 'ORM_CONFLICT' });
      expect((lost[0]!.reason as ConflictError).currentVersion).toBe(winner.version);
    }
    // Each committed winner has its entry in its writer's oplog; no loser does.
    const p1 = await Oplog.reader(db2, 'p1');
    const p2 = await Oplog.reader(db1, 'p2');
    expect((await p1.highWater()) + (await p2.highWater())).toBe(1 + 10);
  });

  it('the change feed invalidates the other instance cache by row tag and key; catches up after a pause; flushes past retention', async () => {
    const oplog1 = await Oplog.open(db1, { instance: 'p1', maxEntries: 5, pruneEvery: 1_000_000 });
    const orm1 = new Orm(db1, { oplog: oplog1 });
    await orm1.createTables(Account);
    await orm1.insert(Account, { id: 1n, balance: 1n });

    const cache = new Cache<string>({ name: 'p2-accounts' });
    const feed = await new ChangeFeed([await Oplog.reader(db2, 'p1')], { pollMs: 20 }).start();
    feed.onFlush(() => cache.clear());
    const mapping = (e: WriteEvent) => ({ keys: [`${e.table}/${String(e.primaryKey)}`], tags: [rowTag(e.table, e.primaryKey as string)] });
    cache.invalidateOn(feed, mapping);
    try {
      cache.set('accounts/1', 'by key');
      cache.set('view-of-1', 'by tag', { tags: [rowTag('accounts', 1n)] });
      cache.set('other', 'untouched', { tags: [rowTag('accounts', 2n)] });
      const row = await orm1.find(Account, 1n);
      await orm1.update(Account, row!, { balance: 2n });
      await eventually(() => !cache.has('accounts/1') && !cache.has('view-of-1'), 5_000, 'invalidated across instances');
      expect(cache.has('other')).toBe(true);

      // Paused (closed), three writes happen, resumed from the cursor: all three arrive.
      await feed.close();
      const resumed = await new ChangeFeed([await Oplog.reader(db2, 'p1')], { from: { p1: feed.cursors.get('p1')! }, pollMs: 20 }).start();
      const seen: string[] = [];
      resumed.subscribe((e) => seen.push(`${e.op}:${String(e.primaryKey)}`));
      resumed.onFlush(() => cache.clear());
      cache.invalidateOn(resumed, mapping);
      for (const id of [2n, 3n, 4n]) await orm1.insert(Account, { id, balance: 0n });
      await eventually(() => seen.length === 3, 5_000, 'caught up');
      expect(seen).toEqual(['update:2', 'update:3', 'update:4']);
      expect(cache.has('other')).toBe(false);
      await resumed.close();

      // Down past retention: the next start flushes and says so.
      cache.set('stale', 'x');
      const at = resumed.cursors.get('p1')!;
      for (let i = 5n; i < 15n; i++) await orm1.insert(Account, { id: i, balance: 0n });
      await oplog1.prune();
      const late = await new ChangeFeed([await Oplog.reader(db2, 'p1')], { from: { p1: at }, pollMs: 20 }).start();
      late.onFlush(() => cache.clear());
      await eventually(() => late.flushes === 1, 5_000, 'flushed');
      expect(cache.has('stale')).toBe(false);
      await late.close();
    } finally {
      await feed.close();
    }
  });
});
