/**
 * Two embedded replicas (the edge and local-first case): two Molo nodes on loopback, each with its
 * own SQLite file, replicate a notes model (optimistic) and a KV store (last writer wins) by oplog
 * over their link. A note written on one appears on the other; the second node stops, the first
 * writes on, and the second catches up from its persisted cursor when it comes back; both write one
 * KV key while cut off and settle on the later write; the lag and health read as an operator sees them.
 * Run: npm run example examples/cluster/replicas.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openKv, openSqlite, type Database, type SqlKvStore } from 'molo/data';
import { defineModel, field, Orm } from 'molo/data/orm';
import { Oplog, OplogApplier, ormTarget } from 'molo/data';
import { Replication, startNode, type Node } from 'molo/nodes';

const Note = defineModel('notes', { id: field.int64().primaryKey(), body: field.text(), version: field.int64() }, { version: 'version', replicated: { policy: 'optimistic' } });

interface Replica {
  node: Node;
  db: Database;
  orm: Orm;
  kv: SqlKvStore;
  replication: Replication;
}

const dir = mkdtempSync(join(tmpdir(), 'molo-replicas-'));
const secret = process.env['MOLO_CLUSTER_SECRET'] ?? 'molo-example-cluster-secret-0123';

// The oplog's instance id is the node's name, so a fixed port keeps it across restarts.
async function replica(name: string): Promise<Replica> {
  const node = await startNode({ name, secret, reconnectMinMs: 50, reconnectMaxMs: 500, system: { logger: false } });
  const db = await openSqlite(node.system, { file: join(dir, `${name.split('@')[0]}.db`) });
  const oplog = await Oplog.open(db, { instance: node.name });
  const orm = new Orm(db, { oplog });
  await orm.createTables(Note);
  const kv = await openKv(db, { replicated: { policy: 'lww' }, oplog });
  const sink = new OplogApplier(oplog, { targets: [ormTarget(db, Note), kv.replicationTarget()] });
  const replication = await Replication.start(node, { source: oplog, sink });
  return { node, db, orm, kv, replication };
}

async function stop(replica: Replica): Promise<void> {
  await replica.replication.stop();
  await replica.kv.close();
  await replica.db.close();
  await replica.node.stop();
}

async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('replicas did not converge within 15 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const count = (replica: Replica): Promise<number> => replica.orm.query(Note).count();
const text = async (replica: Replica, key: string): Promise<string | undefined> => (await replica.kv.get(key))?.value.toString();

try {
  const a = await replica('edge-a@127.0.0.1:0');
  let b = await replica('edge-b@127.0.0.1:0');
  const bName = b.node.name;
  await a.node.connect(bName);

  await a.orm.insert(Note, { id: 1n, body: 'written on a' });
  await until(async () => (await b.orm.find(Note, 1n)) !== undefined);
  console.log(`on b: "${(await b.orm.find(Note, 1n))!.body}"`);

  // b goes away; a writes on.
  await stop(b);
  for (let i = 2; i <= 200; i++) await a.orm.insert(Note, { id: BigInt(i), body: `note ${i}` });
  b = await replica(bName);
  await b.node.connect(a.node.name);
  await until(async () => (await count(b)) === 200);
  console.log(`b back: caught up to ${await count(b)} notes, lag ${b.replication.lag(a.node.name)}`);

  // Both write one key while cut off; the later write wins on both.
  a.node.disconnect(bName);
  await until(async () => !a.node.isConnected(bName));
  await b.kv.set('motd', Buffer.from('from b'));
  await new Promise((resolve) => setTimeout(resolve, 5));
  await a.kv.set('motd', Buffer.from('from a, later'));
  await a.node.connect(bName);
  await until(async () => (await text(b, 'motd')) === 'from a, later' && (await text(a, 'motd')) === 'from a, later');
  console.log(`motd on both after the heal: "${await text(a, 'motd')}"`);
  console.log(`health problems on b: ${b.replication.healthProblems().length}`);
  await stop(b);
  await stop(a);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
