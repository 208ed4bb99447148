/**
 * R7-8 across OS processes on one shared Postgres: another process writes through its ORM (with its
 * oplog); this process's cache, following that instance's oplog as a change feed, drops the entries
 * of the rows written, by key and by row tag, and keeps the rest.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { Cache, rowTag, type Database, type WriteEvent } from '../../../src/index.js';
import { ChangeFeed } from '../../../src/data/replication/feed.js';
import { Oplog } from '../../../src/data/replication/oplog.js';
import { createPostgresPool } from '../../../src/data/postgres.js';
import { forkPeer, type ClusterPeer } from '../../nodes/cluster-child.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { eventually, testSystem } from '../../support/systems.js';

let system: ActorSystem;
let fresh: FreshDatabase;
let db: Database;
beforeEach(async () => {
  system = testSystem();
  fresh = freshDatabase('replx');
  db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 1, max: 2 });
});
afterEach(async () => {
  await db.close();
  await system.shutdown();
  fresh.drop();
});

describe('cache invalidation across processes on a shared Postgres', () => {
  it("another process's writes invalidate this process's cache by key and by tag", async () => {
    const writer: ClusterPeer = await forkPeer('test/data/replication/fixtures/pg-writer.ts', ['p1', fresh.host, String(fresh.port), fresh.user, fresh.database]);
    await writer.run('insert', 1, 0);
    await writer.run('insert', 2, 0);
    const cache = new Cache<string>({ name: 'accounts-here' });
    const feed = await new ChangeFeed([await Oplog.reader(db, 'p1')], { pollMs: 20 }).start();
    cache.invalidateOn(feed, (e: WriteEvent) => ({ keys: [`${e.table}/${String(e.primaryKey)}`], tags: [rowTag(e.table, e.primaryKey as string)] }));
    try {
      cache.set('accounts/1', 'by key');
      cache.set('view-of-2', 'by tag', { tags: [rowTag('accounts', 2n)] });
      cache.set('other', 'untouched', { tags: [rowTag('accounts', 3n)] });
      await writer.run('update', 1, 5);
      await eventually(() => !cache.has('accounts/1'), 5_000, 'invalidated by key');
      expect(cache.has('view-of-2')).toBe(true);
      await writer.run('update', 2, 7);
      await eventually(() => !cache.has('view-of-2'), 5_000, 'invalidated by tag');
      expect(cache.has('other')).toBe(true);
    } finally {
      await feed.close();
      writer.child.disconnect();
      await new Promise((resolve) => writer.child.once('exit', resolve));
    }
  }, 30_000);
});
