/**
 * Two embedded replicas (the edge and local-first case): two Molo nodes on loopback, each with its
 * own SQLite file, replicate by oplog over their link a notes model (optimistic), a settings model
 * (a hook that keeps the longer text) and a KV store (last writer wins). A note written on one
 * appears on the other and drops the other's cached copy; the second node stops, the first writes
 * on, and the second catches up from its persisted cursor when it comes back; then both write while
 * cut off, and each policy settles its conflict the same way on both; the conflict log and the lag
 * read as an operator sees them.
 * Run: npm run example examples/cluster/replicas.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appliedChanges, Cache, openKv, openSqlite, Oplog, OplogApplier, ormTarget, readConflicts, rowTag, type Database, type SqlKvStore, type WriteEvent } from 'molo/data';
import { defineModel, field, Orm } from 'molo/data/orm';
import { Replication, startNode, type Node } from 'molo/nodes';

const Note = defineModel('notes', { id: field.int64().primaryKey(), body: field.text(), version: field.int64() }, { version: 'version', replicated: { policy: 'optimistic' } });
// The hook must be deterministic and symmetric: both nodes pick the same side.
const Setting = defineModel(
  'settings',
  { name: field.text().primaryKey(), value: field.text() },
  {
    replicated: {
      policy: 'hook',
      resolve: (local, remote) => {
        const [l, r] = [String(local.data?.value ?? ''), String(remote.data?.value ?? '')];
        return r.length !== l.length ? (r.length > l.length ? 'remote' : 'local') : r > l ? 'remote' : 'local';
      },
    },
  },
);

interface Replica {
  node: Node;
  db: Database;
  orm: Orm;
  kv: SqlKvStore;
  sink: OplogApplier;
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
  await orm.createTables(Note, Setting);
  const kv = await openKv(db, { replicated: { policy: 'lww' }, oplog });
  const sink = new OplogApplier(oplog, { targets: [ormTarget(db, Note), ormTarget(db, Setting), kv.replicationTarget()] });
  const replication = await Replication.start(node, { source: oplog, sink });
  return { node, db, orm, kv, sink, replication };
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

  // A cache on b, invalidated by what replication applies there.
  const cache = new Cache<string>({ name: 'b-notes' });
  cache.invalidateOn(appliedChanges(b.sink), (e: WriteEvent) => ({ keys: [], tags: [rowTag(e.table, e.primaryKey as string)] }));
  cache.set('note-1-view', 'rendered note 1', { tags: [rowTag('notes', 1n)] });
  await a.orm.update(Note, (await a.orm.find(Note, 1n))!, { body: 'edited on a' });
  await until(async () => !cache.has('note-1-view'));
  console.log(`b's cached view of note 1 dropped by a's edit: ${!cache.has('note-1-view')}`);

  // b goes away; a writes on.
  await stop(b);
  for (let i = 2; i <= 200; i++) await a.orm.insert(Note, { id: BigInt(i), body: `note ${i}` });
  b = await replica(bName);
  await b.node.connect(a.node.name);
  await until(async () => (await count(b)) === 200);
  console.log(`b back: caught up to ${await count(b)} notes, lag ${b.replication.lag(a.node.name)}`);

  // Both write while cut off; each policy settles its conflict the same way on both.
  await a.orm.insert(Setting, { name: 'theme', value: 'dark' });
  await until(async () => (await b.orm.find(Setting, 'theme')) !== undefined);
  // Cut from both sides: b connected to a, so it would dial a again at once and replicate its writes before a's.
  a.node.disconnect(bName);
  b.node.disconnect(a.node.name);
  await until(async () => !a.node.isConnected(bName) && !b.node.isConnected(a.node.name));
  await b.kv.set('motd', Buffer.from('from b'));
  const onB = (await b.orm.find(Note, 2n))!;
  await b.orm.update(Note, onB, { body: 'b edits note 2 once' });
  await b.orm.update(Note, (await b.orm.find(Note, 2n))!, { body: 'b edits note 2 twice' });
  await b.orm.update(Setting, (await b.orm.find(Setting, 'theme'))!, { value: 'solarized' });
  await new Promise((resolve) => setTimeout(resolve, 5));
  await a.kv.set('motd', Buffer.from('from a, later'));
  await a.orm.update(Note, (await a.orm.find(Note, 2n))!, { body: 'a edits note 2 once, later' });
  await a.orm.update(Setting, (await a.orm.find(Setting, 'theme'))!, { value: 'light' });
  await a.node.connect(bName);
  const show = (value: unknown): string => JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  const same = async (read: (r: Replica) => Promise<unknown>) => show(await read(a)) === show(await read(b));
  await until(async () => (await same((r) => text(r, 'motd'))) && (await same((r) => r.orm.find(Note, 2n))) && (await same((r) => r.orm.find(Setting, 'theme'))));
  console.log(`kv (lww), later write wins: "${await text(a, 'motd')}"`);
  console.log(`note 2 (optimistic), higher version wins: "${(await a.orm.find(Note, 2n))!.body}"`);
  console.log(`theme (hook: longer text): "${(await a.orm.find(Setting, 'theme'))!.value}"`);
  const losers = (await readConflicts(b.db)).map((c) => `${c.model}/${c.key} (${c.reason})`).sort();
  console.log(`conflict log on b: ${losers.join(', ')}`);
  console.log(`health problems on b: ${b.replication.healthProblems().length}`);
  await stop(b);
  await stop(a);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
