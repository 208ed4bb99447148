/**
 * KV stores: the same KvStore interface in memory and on SQLite in a temp directory — set and get
 * with versions, JSON helpers, a paged prefix scan, a TTL, and a lease by compare-and-set.
 * Run: npm run example examples/kv.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from 'molo/actors';
import { createMemoryKv, getJson, getText, openKv, openSqlite, setJson, setText, type KvStore } from 'molo/data';

async function demo(name: string, store: KvStore): Promise<void> {
  const v1 = await store.set('user:1', Buffer.from('ada'));
  const v2 = await setText(store, 'user:2', 'bob');
  await setText(store, 'user:3', 'cy');
  console.log(`${name}: versions grow ${v1 < v2}, user:1 = ${await getText(store, 'user:1')}`);

  await setJson(store, 'cfg', { retries: 3 });
  const cfg = await getJson<{ retries: number }>(store, 'cfg');
  console.log(`${name}: cfg.retries = ${cfg?.retries}`);

  const first = await store.scan('user:', { limit: 2 });
  const rest = await store.scan('user:', { limit: 2, cursor: first.next });
  console.log(`${name}: scan ${first.keys.join(',')} | ${rest.keys.join(',')} (last page: ${rest.next === undefined})`);

  await store.set('session', Buffer.from('x'), { ttlMs: 20 });
  await new Promise((resolve) => setTimeout(resolve, 40));
  console.log(`${name}: session after its TTL exists: ${await store.exists('session')}`);

  // A lease: only the first taker wins; renewals and release name the version they hold.
  const mine = await store.setIfVersion('lease:scheduler', Buffer.from('node-a'), null, { ttlMs: 10_000 });
  const theirs = await store.setIfVersion('lease:scheduler', Buffer.from('node-b'), null, { ttlMs: 10_000 });
  const renewed = await store.setIfVersion('lease:scheduler', Buffer.from('node-a'), mine.version, { ttlMs: 10_000 });
  const released = await store.deleteIfVersion('lease:scheduler', renewed.version!);
  console.log(`${name}: lease taken ${mine.ok}, second taker ${theirs.ok}, renewed ${renewed.ok}, released ${released.ok}`);
  await store.close();
}

const dir = mkdtempSync(join(tmpdir(), 'molo-kv-example-'));
const system = new ActorSystem();
try {
  await demo('memory', createMemoryKv());
  const db = await openSqlite(system, { file: join(dir, 'kv.db') });
  await demo('sqlite', await openKv(db)); // the store's table is created on first open
  await db.close();
} finally {
  system.shutdown();
  rmSync(dir, { recursive: true, force: true });
}
