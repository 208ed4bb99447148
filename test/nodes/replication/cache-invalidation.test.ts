/**
 * R7-8 between embedded nodes: a cache on node b drops its entries (by key and by row tag) when a
 * writes the rows they depend on, carried by replication (`appliedChanges(sink)`); a b that was cut
 * off keeps serving only until its replicator catches up, then the entries of every write it missed
 * are gone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Cache, rowTag, type Database, type WriteEvent } from '../../../src/index.js';
import { defineModel, field, Orm } from '../../../src/data/orm/index.js';
import { appliedChanges, Oplog, OplogApplier, ormTarget } from '../../../src/data/replication/index.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import { Replication, type Node } from '../../../src/nodes/index.js';
import { testNode } from '../support.js';

const Account = defineModel('accounts', { id: field.int64().primaryKey(), balance: field.int64(), version: field.int64() }, { version: 'version', replicated: { policy: 'optimistic' } });

let dir: string;
const dbs: Database[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'molo-repl-cache-'));
});
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

async function member(name: string): Promise<{ node: Node; orm: Orm; sink: OplogApplier }> {
  const node = await testNode(name);
  const db = await openSqlite(node.system, { file: join(dir, `${name}.db`) });
  dbs.push(db);
  const oplog = await Oplog.open(db, { instance: node.name });
  const orm = new Orm(db, { oplog });
  await orm.createTables(Account);
  const sink = new OplogApplier(oplog, { targets: [ormTarget(db, Account)] });
  await Replication.start(node, { source: oplog, sink, retryMinMs: 20, retryMaxMs: 200 });
  return { node, orm, sink };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('cache invalidation across embedded nodes', () => {
  it('a write on a drops the dependent entries of a cache on b, also after b was cut off', async () => {
    const a = await member('a');
    const b = await member('b');
    await a.node.connect(b.node.name);
    for (const id of [1n, 2n, 3n]) await a.orm.insert(Account, { id, balance: 0n });
    await until(() => b.sink.totals.applied === 3, 'rows replicated');

    const cache = new Cache<string>({ name: 'b-accounts' });
    const mapping = (e: WriteEvent) => ({ keys: [`${e.table}/${String(e.primaryKey)}`], tags: [rowTag(e.table, e.primaryKey as string)] });
    cache.invalidateOn(appliedChanges(b.sink), mapping);
    cache.set('accounts/1', 'by key');
    cache.set('view-of-2', 'by tag', { tags: [rowTag('accounts', 2n)] });
    cache.set('view-of-3', 'by tag', { tags: [rowTag('accounts', 3n)] });
    cache.set('other', 'untouched', { tags: [rowTag('accounts', 9n)] });

    await a.orm.update(Account, (await a.orm.find(Account, 1n))!, { balance: 10n });
    await until(() => !cache.has('accounts/1'), 'invalidated by key across nodes');
    expect(cache.has('view-of-2')).toBe(true);

    // Cut off: a writes rows 2 and 3; b's entries stay until its replicator catches up after the heal.
    a.node.disconnect(b.node.name);
    await until(() => !a.node.isConnected(b.node.name) && !b.node.isConnected(a.node.name), 'cut');
    await a.orm.update(Account, (await a.orm.find(Account, 2n))!, { balance: 20n });
    await a.orm.delete(Account, (await a.orm.find(Account, 3n))!);
    expect(cache.has('view-of-2') && cache.has('view-of-3')).toBe(true);
    await a.node.connect(b.node.name);
    await until(() => !cache.has('view-of-2') && !cache.has('view-of-3'), 'invalidated after catching up');
    expect(cache.has('other')).toBe(true);
  }, 30_000);
});
