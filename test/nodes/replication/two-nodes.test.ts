/**
 * Replication over real node links: two (and three) nodes in this process, each with its own SQLite
 * file, replicate a declared model. Writes reach the other node by push; a node that was down
 * catches up by pull from its persisted cursor; a node behind the other's retention resyncs from a
 * snapshot; the lag is a gauge and degrades health above the threshold; replicators are supervised
 * children (a crashed one is restarted and resumes from its cursor).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ref } from '../../../src/actors/index.js';
import { Supervisor } from '../../../src/behaviours/index.js';
import type { Database } from '../../../src/data/index.js';
import { defineModel, field, Orm } from '../../../src/data/orm/index.js';
import { Oplog, OplogApplier, ormTarget } from '../../../src/data/replication/index.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import { startNode as startAppNode } from '../../../src/admin/index.js';
import { Replication, type Node } from '../../../src/nodes/index.js';
import { testNode } from '../support.js';

const Note = defineModel('notes', { id: field.int64().primaryKey(), body: field.text(), version: field.int64() }, { version: 'version', replicated: { policy: 'optimistic' } });

let dir: string;
const dbs: Database[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'molo-repl-nodes-'));
});
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

interface Member {
  node: Node;
  db: Database;
  orm: Orm;
  oplog: Oplog;
  replication: Replication;
  metrics: Registry;
}

async function member(name: string, file: string, oplogOptions: { maxEntries?: number; pruneEvery?: number } = {}, extra: { lagAlertEntries?: number; fixedName?: string } = {}): Promise<Member> {
  const node = await testNode(extra.fixedName ?? name);
  const db = await openSqlite(node.system, { file: join(dir, file) });
  dbs.push(db);
  const oplog = await Oplog.open(db, { instance: node.name, ...oplogOptions });
  const orm = new Orm(db, { oplog });
  await orm.createTables(Note);
  const sink = new OplogApplier(oplog, { targets: [ormTarget(db, Note)] });
  const metrics = new Registry();
  const replication = await Replication.start(node, { source: oplog, sink, metrics, retryMinMs: 20, retryMaxMs: 200, ...(extra.lagAlertEntries === undefined ? {} : { lagAlertEntries: extra.lagAlertEntries }) });
  return { node, db, orm, oplog, replication, metrics };
}

const notes = async (db: Database) => (await db.query<{ id: bigint; body: string }>('SELECT id, body FROM notes ORDER BY id')).rows.map((row) => [Number(row.id), row.body]);

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 10_000, what: () => unknown = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met in time ${JSON.stringify(await what())}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('replication between nodes', () => {
  it('writes on either node reach the other; a late joiner pulls what it missed', async () => {
    const a = await member('a', 'a.db');
    const b = await member('b', 'b.db');
    for (let i = 1; i <= 30; i++) await a.orm.insert(Note, { id: BigInt(i), body: `a ${i}` });
    await a.node.connect(b.node.name);
    await until(async () => (await notes(b.db)).length === 30);
    // Live pushes after the catch-up, in both directions.
    await b.orm.insert(Note, { id: 100n, body: 'from b' });
    const one = await a.orm.find(Note, 1n);
    await a.orm.update(Note, one!, { body: 'a 1, edited' });
    await until(async () => JSON.stringify(await notes(a.db)) === JSON.stringify(await notes(b.db)) && (await notes(a.db)).length === 31);
    await a.replication.caughtUp();
    await b.replication.caughtUp();
    expect(a.replication.lag(b.node.name)).toBe(0);
    expect(b.replication.stats().peers[0]).toMatchObject({ peer: a.node.name, state: 'live', lag: 0 });
    const metrics = await b.metrics.metrics();
    expect(metrics).toMatch(new RegExp(`molo_replication_lag_entries\\{node="${b.node.name}",peer="${a.node.name}"\\} 0`));
  }, 30_000);

  it('a node that restarts resumes from its persisted cursor, and one behind retention resyncs', async () => {
    const a = await member('a', 'a.db', { maxEntries: 10, pruneEvery: 5 });
    let b = await member('b', 'b.db');
    await a.node.connect(b.node.name);
    for (let i = 1; i <= 5; i++) await a.orm.insert(Note, { id: BigInt(i), body: `a ${i}` });
    await until(async () => (await notes(b.db)).length === 5);
    const bName = b.node.name;
    // b goes away; a writes past its retention meanwhile.
    await b.replication.stop();
    await b.db.close();
    await b.node.stop();
    for (let i = 6; i <= 40; i++) await a.orm.insert(Note, { id: BigInt(i), body: `a ${i}` });
    await a.orm.delete(Note, (await a.orm.find(Note, 2n))!);
    await a.oplog.prune();
    expect(await a.oplog.pruned()).toBeGreaterThan(5);
    b = await member('b', 'b.db', {}, { fixedName: bName });
    await b.node.connect(a.node.name);
    await until(async () => JSON.stringify(await notes(b.db)) === JSON.stringify(await notes(a.db))).catch(async (error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(b.replication.stats())} a=${(await notes(a.db)).length} b=${(await notes(b.db)).length}`);
    });
    expect(b.replication.stats().peers[0]!.resyncs).toBe(1);
    // And tails from there.
    await a.orm.insert(Note, { id: 50n, body: 'after resync' });
    await until(async () => (await notes(b.db)).some(([id]) => id === 50));
  }, 30_000);

  it('the lag degrades health, naming the peer; a crashed replicator is restarted by its supervisor and resumes', async () => {
    const a = await member('a', 'a.db');
    const b = await member('b', 'b.db', {}, { lagAlertEntries: 5 });
    await a.node.connect(b.node.name);
    await until(() => b.replication.stats().peers.length === 1 && a.replication.stats().peers.length === 1);
    // A pull replicator stopped from outside (as a crash would): its supervisor restarts it.
    const children = await Supervisor.whichChildren(b.node.system, b.replication.supervisor!);
    expect(children.map((child) => child.id).sort()).toEqual([`pull:${a.node.name}`, `push:${a.node.name}`]);
    const pull = children.find((child) => child.id?.startsWith('pull:'))!.ref as Ref;
    b.node.system.exit(pull, 'kill');
    await until(async () => {
      const now = await Supervisor.whichChildren(b.node.system, b.replication.supervisor!);
      const ref = now.find((child) => child.id?.startsWith('pull:'))?.ref;
      return ref instanceof Ref && !ref.equals(pull);
    }, 10_000, () => Supervisor.whichChildren(b.node.system, b.replication.supervisor!));
    for (let i = 1; i <= 20; i++) await a.orm.insert(Note, { id: BigInt(i), body: `a ${i}` });
    await until(async () => (await notes(b.db)).length === 20, 10_000, async () => {
      const aKids = await Supervisor.whichChildren(a.node.system, a.replication.supervisor!);
      const push = aKids.find((child) => child.id?.startsWith('push:'))!.ref as Ref;
      return [b.replication.stats(), await a.node.system.call(push, 'status'), await a.oplog.highWater()];
    });
    expect(b.replication.healthProblems()).toEqual([]);
  }, 30_000);

  it('a peer whose entries are refused (its clock far ahead) stalls without skipping; the lag degrades /health, naming it', async () => {
    // a's wall clock runs 10 minutes ahead: b refuses its entries (drift cap 60 s) and retries them, never skips.
    const aNode = await testNode('a');
    const aDb = await openSqlite(aNode.system, { file: join(dir, 'a.db') });
    dbs.push(aDb);
    const aOplog = await Oplog.open(aDb, { instance: aNode.name, now: () => Date.now() + 600_000 });
    const aOrm = new Orm(aDb, { oplog: aOplog });
    await aOrm.createTables(Note);
    await Replication.start(aNode, { source: aOplog, sink: new OplogApplier(aOplog, { targets: [ormTarget(aDb, Note)] }) });

    // b runs its replicators as a child of an application's root, with the health check on its admin surface.
    const bNode = await testNode('b');
    const bDb = await openSqlite(bNode.system, { file: join(dir, 'b.db') });
    dbs.push(bDb);
    const bOplog = await Oplog.open(bDb, { instance: bNode.name });
    await new Orm(bDb, { oplog: bOplog }).createTables(Note);
    const child = Replication.childSpec(bNode, { source: bOplog, sink: new OplogApplier(bOplog, { targets: [ormTarget(bDb, Note)] }), lagAlertEntries: 5, retryMinMs: 20, retryMaxMs: 100 });
    const app = await startAppNode({ system: bNode.system, root: { children: [child] }, healthChecks: [child.replication.healthCheck()], admin: { port: 0 }, signals: false, log: () => {} });
    try {
      const health = () => fetch(new URL("/health", app.adminUrl!));
      expect(((await (await health()).json()) as { status: string }).status).toBe("ok");
      await aNode.connect(bNode.name);
      for (let i = 1; i <= 10; i++) await aOrm.insert(Note, { id: BigInt(i), body: `a ${i}` });
      await until(() => child.replication.stats().peers[0]?.state === 'stalled' && child.replication.lag(aNode.name) === 10, 10_000, () => child.replication.stats());
      const answer = await health();
      expect(answer.status).toBe(200);
      const report = (await answer.json()) as { status: string; problems: unknown };
      expect(report.status).toBe('degraded');
      expect(report.problems).toEqual([{ check: 'replication', problem: `replication from ${aNode.name} is 10 entries behind (alert above 5)` }]);
      expect(await notes(bDb)).toEqual([]);
      // The replicators are in the application's tree, with their lag.
      const tree = await Supervisor.whichChildren(bNode.system, child.replication.supervisor!);
      expect(tree.map((entry) => entry.id).sort()).toEqual([`pull:${aNode.name}`, `push:${aNode.name}`]);
      const snapshot = JSON.stringify(await (await fetch(new URL('/tree', app.adminUrl!))).json());
      expect(snapshot).toContain(`"peer":"${aNode.name}","direction":"pull","state":"stalled"`);
      expect(snapshot).toContain('"lag":10');
    } finally {
      await app.stop();
    }
  }, 30_000);
});
