/**
 * A KV store declaring `replicated: { policy: 'lww' }`: each write commits with its oplog entry (a
 * refused CAS writes none), the entry carries the expiry as an absolute deadline so both replicas
 * expire the key at the same moment, deletes replicate, and concurrent writes of one key on two
 * cut-off nodes settle on the later one on both. Over real node links, each node on its own SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/data/index.js';
import { openKv, type SqlKvStore } from '../../../src/data/kv/index.js';
import { Oplog, OplogApplier, readConflicts } from '../../../src/data/replication/index.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import { InvalidDataConfig } from '../../../src/data/errors.js';
import { Replication, type Node } from '../../../src/nodes/index.js';
import { testNode } from '../support.js';

let dir: string;
const dbs: Database[] = [];
const stores: SqlKvStore[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'molo-repl-kv-'));
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => undefined);
  for (const db of dbs.splice(0)) await db.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

async function member(name: string): Promise<{ node: Node; db: Database; kv: SqlKvStore; oplog: Oplog; replication: Replication }> {
  const node = await testNode(name);
  const db = await openSqlite(node.system, { file: join(dir, `${name}.db`) });
  dbs.push(db);
  const oplog = await Oplog.open(db, { instance: node.name });
  const kv = await openKv(db, { replicated: { policy: 'lww' }, oplog, sweepIntervalMs: 50 });
  stores.push(kv);
  const replication = await Replication.start(node, { source: oplog, sink: new OplogApplier(oplog, { targets: [kv.replicationTarget()] }), retryMinMs: 20, retryMaxMs: 200 });
  return { node, db, kv, oplog, replication };
}

const text = async (kv: SqlKvStore, key: string) => (await kv.get(key))?.value.toString();
async function until(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
const deadlineOf = async (db: Database, key: string) => (await db.query<{ expires_at: bigint | null }>('SELECT expires_at FROM molo_kv WHERE key = $1', [Buffer.from(key)])).rows[0]?.expires_at;

describe('replicated KV', () => {
  it('refuses a policy that compares per-instance versions, and a store without an oplog', async () => {
    const node = await testNode('solo');
    const db = await openSqlite(node.system, { file: join(dir, 'solo.db') });
    dbs.push(db);
    const oplog = await Oplog.open(db, { instance: node.name });
    await expect(openKv(db, { replicated: { policy: 'optimistic' }, oplog })).rejects.toBeInstanceOf(InvalidDataConfig);
    await expect(openKv(db, { replicated: { policy: 'lww' } })).rejects.toMatchObject({ code: 'DB_INVALID_CONFIG' });
  });

  it('writes commit with their entries; a refused CAS appends none', async () => {
    const a = await member('a');
    await a.kv.set('k', Buffer.from('one'));
    const cas = await a.kv.setIfVersion('k', Buffer.from('two'), 999);
    expect(cas.ok).toBe(false);
    await a.kv.delete('absent');
    const entries = await a.oplog.read(0);
    expect(entries.map((e) => [e.model, e.key, e.op])).toEqual([['kv:molo_kv', 'k', 'upsert']]);
    expect(Buffer.from(entries[0]!.data!.value as Uint8Array).toString()).toBe('one');
  });

  it('values, deletes and absolute expiry deadlines reach the other node; a concurrent write settles on the later one', async () => {
    const a = await member('a');
    const b = await member('b');
    await a.node.connect(b.node.name);
    await a.kv.set('plain', Buffer.from('hello'));
    await a.kv.set('short', Buffer.from('soon gone'), { ttlMs: 1_500 });
    await a.kv.set('doomed', Buffer.from('x'));
    await a.kv.delete('doomed');
    await until(async () => (await text(b.kv, 'plain')) === 'hello' && (await text(b.kv, 'short')) === 'soon gone');
    await until(async () => (await b.oplog.db.query('SELECT 1 FROM _molo_replica_keys WHERE key = $1 AND deleted', ['doomed'])).rows.length === 1);
    expect(await b.kv.exists('doomed')).toBe(false);
    // The same deadline on both: not a TTL restarted on arrival.
    expect(await deadlineOf(b.db, 'short')).toBe(await deadlineOf(a.db, 'short'));
    await until(async () => !(await a.kv.exists('short')) && !(await b.kv.exists('short')), 5_000);

    // Cut off, both write one key; the later write wins on both after the heal.
    a.node.disconnect(b.node.name);
    await until(() => !a.node.isConnected(b.node.name) && !b.node.isConnected(a.node.name));
    await b.kv.set('shared', Buffer.from('b first'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await a.kv.set('shared', Buffer.from('a later'));
    await a.node.connect(b.node.name);
    await until(async () => (await text(b.kv, 'shared')) === 'a later');
    await a.replication.caughtUp();
    expect(await text(a.kv, 'shared')).toBe('a later');
    // The loser, b's earlier write, is in the conflict log of the node that had it and lost it.
    const lost = (await readConflicts(b.db)).filter((record) => record.key === 'shared');
    expect(lost).toMatchObject([{ model: 'kv:molo_kv', policy: 'lww', reason: 'lww', winner: { instance: a.node.name }, loser: { instance: b.node.name, op: 'upsert' } }]);
    expect(Buffer.from(lost[0]!.loser.data!.value as Uint8Array).toString()).toBe('b first');
    // a saw b's write arrive after its own later one: kept its own, logged b's as the loser too.
    expect((await readConflicts(a.db)).filter((record) => record.key === 'shared')).toMatchObject([{ winner: { instance: a.node.name }, loser: { instance: b.node.name } }]);
  }, 30_000);
});
