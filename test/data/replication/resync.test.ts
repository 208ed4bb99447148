/**
 * The documented full resync: a receiver whose cursor fell behind the origin's retention gets
 * OplogBehindRetention, applies the origin's snapshot page by page (tombstones as deletes), lands
 * on the snapshot's high water, and tails from there; the two instances then hold the same rows.
 * Also: a batch from a peer carrying entries of another instance is refused, not applied.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { OplogBehindRetention, type Database } from '../../../src/index.js';
import { defineModel, field, Orm } from '../../../src/data/orm/index.js';
import { Oplog } from '../../../src/data/replication/oplog.js';
import { ormTarget } from '../../../src/data/replication/orm-target.js';
import { OplogApplier } from '../../../src/data/replication/sink.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import { testSystem } from '../../support/systems.js';

const Item = defineModel('items', { id: field.int64().primaryKey(), name: field.text(), version: field.int64() }, { version: 'version', replicated: { policy: 'optimistic' } });

let system: ActorSystem;
let dir: string;
let dbA: Database;
let dbB: Database;

beforeEach(async () => {
  system = testSystem();
  dir = mkdtempSync(join(tmpdir(), 'molo-resync-'));
  dbA = await openSqlite(system, { file: join(dir, 'a.db') });
  dbB = await openSqlite(system, { file: join(dir, 'b.db') });
});
afterEach(async () => {
  await dbA.close();
  await dbB.close();
  await system.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

const rows = async (db: Database) => (await db.query('SELECT id, name, version FROM items ORDER BY id')).rows;

describe('resync past retention', () => {
  it('snapshot pages, then tail from the snapshot high water', async () => {
    const a = await Oplog.open(dbA, { instance: 'a', maxEntries: 5, pruneEvery: 1_000_000 });
    const b = await Oplog.open(dbB, { instance: 'b' });
    const ormA = new Orm(dbA, { oplog: a });
    await ormA.createTables(Item);
    await new Orm(dbB, { oplog: b }).createTables(Item);
    const sinkB = new OplogApplier(b, { targets: [ormTarget(dbB, Item)] });
    new OplogApplier(a, { targets: [ormTarget(dbA, Item)] }); // registers a's snapshot reader

    for (let i = 1; i <= 12; i++) await ormA.insert(Item, { id: BigInt(i), name: `item ${i}` });
    const seven = await ormA.find(Item, 7n);
    await ormA.update(Item, seven!, { name: 'seven, renamed' });
    await ormA.delete(Item, (await ormA.find(Item, 3n))!);
    await a.prune();

    const cursor = await sinkB.cursor('a');
    await expect(a.read(cursor)).rejects.toBeInstanceOf(OplogBehindRetention);

    let page = await a.snapshot(null, { maxEntries: 4 });
    let pages = 0;
    for (;;) {
      pages++;
      await sinkB.applySnapshot('a', page);
      if (page.next === null) break;
      page = await a.snapshot(page.next, { maxEntries: 4 });
    }
    expect(pages).toBe(4);
    expect(await sinkB.cursor('a')).toBe(await a.highWater());
    expect(await rows(dbB)).toEqual(await rows(dbA));

    // Tail from there: later writes arrive by the oplog as usual.
    await ormA.insert(Item, { id: 20n, name: 'after resync' });
    const batch = await a.read(await sinkB.cursor('a'));
    expect(batch.map((e) => e.key)).toEqual(['20']);
    expect((await sinkB.apply('a', batch)).applied).toBe(1);
    expect(await rows(dbB)).toEqual(await rows(dbA));
    // Applying the snapshot again changes nothing and logs no conflict.
    const again = await sinkB.applySnapshot('a', await a.snapshot(null));
    expect(again.conflicts).toBe(0);
    expect(await rows(dbB)).toEqual(await rows(dbA));
  });

  it('refuses a batch whose entries are attributed to another instance than the sending peer', async () => {
    const a = await Oplog.open(dbA, { instance: 'a' });
    const b = await Oplog.open(dbB, { instance: 'b' });
    const ormA = new Orm(dbA, { oplog: a });
    await ormA.createTables(Item);
    await new Orm(dbB, { oplog: b }).createTables(Item);
    const sinkB = new OplogApplier(b, { targets: [ormTarget(dbB, Item)] });
    await ormA.insert(Item, { id: 1n, name: 'x' });
    const entries = await a.read(0);
    const forged = entries.map((e) => ({ ...e, instance: 'c' }));
    const result = await sinkB.apply('a', forged);
    expect(result).toMatchObject({ applied: 0, refused: 1, cursor: 0 });
    expect(await rows(dbB)).toEqual([]);
    // Nor may a peer replay this node's own entries to it.
    expect((await sinkB.apply('b', entries.map((e) => ({ ...e, instance: 'b' })))).applied).toBe(0);
  });
});
