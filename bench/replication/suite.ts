/**
 * The `replication` suite: Molo's oplog replication between two embedded nodes (each its own SQLite
 * file, over a node link on loopback, both in this process) against PostgreSQL's logical replication
 * (a publication and a subscription between two databases of a throwaway cluster with
 * `wal_level = logical`, started for the run). Cases:
 * - `apply`: the sink alone (Molo only): N entries read from one SQLite file's oplog into memory
 *   beforehand, then applied to another's in sync batches (500), timed; what the transport's apply costs.
 * - `catch_up`: N rows written on the origin beforehand (batches of 500); the time from connecting
 *   (Molo) or enabling the subscription (Postgres) until the replica holds all N.
 * - `live`: N rows written one per transaction, each awaited; the time from the first write until
 *   the replica holds all N (what a user waits for until the other side sees the last write).
 * - `lag`: a steady 5,000 rows/s (50 per transaction every 10 ms) for a few seconds; each row's lag is
 *   the time from its commit until the replica shows it (polled every 2 ms): p50 and p99.
 * - `writer_overhead`: single-row inserts per second on one SQLite file, with and without the
 *   oplog (Molo only): what recording each change in its transaction costs the writer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from '../../src/actors/index.js';
import type { Database } from '../../src/data/index.js';
import { createPostgresPool } from '../../src/data/postgres.js';
import { defineModel, field, Orm } from '../../src/data/orm/index.js';
import { Oplog, OplogApplier, ormTarget } from '../../src/data/replication/index.js';
import { openSqlite } from '../../src/data/sqlite/index.js';
import { Replication, startNode, type Node } from '../../src/nodes/index.js';
import { startCluster, type Cluster } from '../../test/support/pg-cluster.js';
import { formatTable, type Row, type Suite, type SuiteOptions, type SuiteResult } from '../suite.js';

const CASES = ['apply', 'catch_up', 'live', 'lag', 'writer_overhead'] as const;
const SIZES = {
  full: { catchUp: 100_000, live: 2_000, writes: 3_000, lagSeconds: 5 },
  quick: { catchUp: 1_000, live: 200, writes: 300, lagSeconds: 1 },
} as const;
/** The steady write rate of the `lag` case: 50 rows per transaction every 10 ms. */
const LAG_RATE = { rowsPerTick: 50, tickMs: 10 } as const;
const SECRET = 'molo-bench-replication-secret-0123456789';
const Item = defineModel('items', { id: field.int64().primaryKey(), body: field.text() }, { replicated: { policy: 'lww' } });
const Plain = defineModel('plain_items', { id: field.int64().primaryKey(), body: field.text() });

const log = (message: string): void => void process.stderr.write(`${message}\n`);
const rate = (n: number, ms: number): number => Math.round(n / (ms / 1_000));

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not converged within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

interface MoloReplica {
  node: Node;
  db: Database;
  orm: Orm;
  replication: Replication;
}

async function moloReplica(name: string, dir: string): Promise<MoloReplica> {
  const node = await startNode({ name: `${name}@127.0.0.1:0`, secret: SECRET, system: { logger: false } });
  const db = await openSqlite(node.system, { file: join(dir, `${name}.db`) });
  const oplog = await Oplog.open(db, { instance: node.name });
  const orm = new Orm(db, { oplog });
  await orm.createTables(Item);
  const replication = await Replication.start(node, { source: oplog, sink: new OplogApplier(oplog, { targets: [ormTarget(db, Item)] }) });
  return { node, db, orm, replication };
}

async function closeReplica(replica: MoloReplica): Promise<void> {
  await replica.replication.stop();
  await replica.db.close();
  await replica.node.stop();
}

// The highest id, not count(*): an index lookup, so polling every 2 ms does not load the replica it watches.
const moloCount = async (replica: MoloReplica): Promise<number> => Number((await replica.db.query<{ n: number | bigint | null }>('SELECT max(id) AS n FROM items')).rows[0]!.n ?? 0);

/** Two replicas in a fresh directory for `work`, closed and removed after. */
async function withMoloPair<T>(work: (a: MoloReplica, b: MoloReplica) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'molo-bench-repl-'));
  const [a, b] = [await moloReplica('a', dir), await moloReplica('b', dir)];
  try {
    return await work(a, b);
  } finally {
    await closeReplica(b);
    await closeReplica(a);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Connects the pair and waits until both run their replicators. */
async function connected(a: MoloReplica, b: MoloReplica): Promise<void> {
  await a.node.connect(b.node.name);
  await until(async () => a.replication.stats().peers.length === 1 && b.replication.stats().peers.length === 1, 10_000);
}

function moloCatchUp(n: number): Promise<number> {
  return withMoloPair(async (a, b) => {
    for (let i = 0; i < n; i += 500) await a.orm.insertMany(Item, Array.from({ length: Math.min(500, n - i) }, (_, k) => ({ id: BigInt(i + k + 1), body: `row ${i + k}` })));
    const started = performance.now();
    await a.node.connect(b.node.name);
    await until(async () => (await moloCount(b)) === n, 300_000);
    return performance.now() - started;
  });
}

function moloLive(n: number): Promise<number> {
  return withMoloPair(async (a, b) => {
    await connected(a, b);
    const started = performance.now();
    for (let i = 1; i <= n; i++) await a.orm.insert(Item, { id: BigInt(i), body: `row ${i}` });
    await until(async () => (await moloCount(b)) === n, 300_000);
    return performance.now() - started;
  });
}

async function applyOnly(n: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'molo-bench-repl-'));
  const system = new ActorSystem({ node: 'bench-apply', logger: false });
  try {
    const [from, to] = [await openSqlite(system, { file: join(dir, 'from.db') }), await openSqlite(system, { file: join(dir, 'to.db') })];
    const source = await Oplog.open(from, { instance: 'from' });
    const target = await Oplog.open(to, { instance: 'to' });
    const orm = new Orm(from, { oplog: source });
    await orm.createTables(Item);
    await new Orm(to, { oplog: target }).createTables(Item);
    const sink = new OplogApplier(target, { targets: [ormTarget(to, Item)] });
    for (let i = 0; i < n; i += 500) await orm.insertMany(Item, Array.from({ length: Math.min(500, n - i) }, (_, k) => ({ id: BigInt(i + k + 1), body: `row ${i + k}` })));
    const batches = [];
    for (let cursor = 0; ; ) {
      const batch = await source.read(cursor);
      if (batch.length === 0) break;
      batches.push(batch);
      cursor = batch.at(-1)!.seq;
    }
    const started = performance.now();
    for (const batch of batches) await sink.apply('from', batch);
    const ms = performance.now() - started;
    await from.close();
    await to.close();
    return ms;
  } finally {
    system.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function writerOverhead(n: number): Promise<{ withOplog: number; without: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'molo-bench-repl-'));
  const system = new ActorSystem({ node: 'bench-writer', logger: false });
  try {
    const db = await openSqlite(system, { file: join(dir, 'w.db') });
    const oplog = await Oplog.open(db, { instance: 'w' });
    const orm = new Orm(db, { oplog });
    await orm.createTables(Item, Plain);
    const time = async (insert: (i: number) => Promise<unknown>): Promise<number> => {
      const started = performance.now();
      for (let i = 1; i <= n; i++) await insert(i);
      return rate(n, performance.now() - started);
    };
    // Interleaved halves, so neither side gets the warmer file.
    const half = Math.floor(n / 2);
    const w1 = await time((i) => orm.insert(Item, { id: BigInt(i), body: 'x' }));
    const p1 = await time((i) => orm.insert(Plain, { id: BigInt(i), body: 'x' }));
    const p2 = await time((i) => orm.insert(Plain, { id: BigInt(half * 10 + i), body: 'x' }));
    const w2 = await time((i) => orm.insert(Item, { id: BigInt(half * 10 + i), body: 'x' }));
    await db.close();
    return { withOplog: Math.round((w1 + w2) / 2), without: Math.round((p1 + p2) / 2) };
  } finally {
    system.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes at the steady rate for `seconds`, polling the replica's highest id; returns each row's lag (ms). */
async function steadyLag(seconds: number, write: (from: number, to: number) => Promise<void>, replicaMax: () => Promise<number>): Promise<{ lags: number[]; rows: number; ms: number }> {
  const committedAt: number[] = [];
  const lags: number[] = [];
  let next = 1;
  let seen = 0;
  let writing = true;
  const started = performance.now();
  const poller = (async () => {
    while (writing || seen < next - 1) {
      const max = await replicaMax();
      const now = performance.now();
      for (let id = seen + 1; id <= max; id++) lags.push(now - committedAt[id]!);
      seen = Math.max(seen, max);
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (performance.now() - started > seconds * 1_000 + 120_000) throw new Error('replica did not catch up within 120 s of the last write');
    }
  })();
  for (let tick = 0; performance.now() - started < seconds * 1_000; tick++) {
    const from = next;
    const to = next + LAG_RATE.rowsPerTick - 1;
    await write(from, to);
    const at = performance.now();
    for (let id = from; id <= to; id++) committedAt[id] = at;
    next = to + 1;
    const wait = started + (tick + 1) * LAG_RATE.tickMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  writing = false;
  await poller;
  return { lags, rows: next - 1, ms: performance.now() - started };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function moloLag(seconds: number): Promise<{ lags: number[]; rows: number; ms: number }> {
  return withMoloPair(async (a, b) => {
    await connected(a, b);
    return steadyLag(
      seconds,
      (from, to) => a.orm.insertMany(Item, Array.from({ length: to - from + 1 }, (_, k) => ({ id: BigInt(from + k), body: `row ${from + k}` }))).then(() => undefined),
      async () => Number((await b.db.query<{ m: number | bigint | null }>('SELECT max(id) AS m FROM items')).rows[0]!.m ?? 0),
    );
  });
}

async function pgLag(seconds: number, synchronousCommit: 'on' | 'off'): Promise<{ lags: number[]; rows: number; ms: number }> {
  const pair = await pgPair(synchronousCommit);
  try {
    await pair.sub.query('ALTER SUBSCRIPTION s ENABLE');
    await pair.pub.query(`INSERT INTO items (id, body) VALUES (0, 'warm-up')`);
    await until(async () => (await pair.sub.query('SELECT 1 FROM items WHERE id = 0')).rows.length === 1, 30_000);
    return await steadyLag(
      seconds,
      async (from, to) => void (await pair.pub.query(`INSERT INTO items (id, body) SELECT g, 'row ' || g FROM generate_series($1::int8, $2::int8) g`, [from, to])),
      async () => Number((await pair.sub.query<{ m: bigint | null }>('SELECT max(id) AS m FROM items')).rows[0]!.m ?? 0),
    );
  } finally {
    await closePg(pair);
  }
}

interface PgPair {
  readonly cluster: Cluster;
  readonly pub: Database;
  readonly sub: Database;
  readonly system: ActorSystem;
}

async function pgPair(synchronousCommit: 'on' | 'off' = 'off'): Promise<PgPair> {
  // Durability as close to SQLite's `synchronous=normal` in WAL mode as Postgres goes: commits are not
  // flushed one by one (a crash of the machine may lose the last ones), the WAL is fsynced. With `off`
  // the WAL sender waits for the WAL writer's flush (wal_writer_delay, 200 ms) before it sends a
  // commit, which is most of the lag; the `lag` case also runs with `on`, Postgres's default.
  const cluster = await startCluster({
    settings: { wal_level: 'logical', max_replication_slots: 10, max_wal_senders: 10, fsync: 'on', synchronous_commit: synchronousCommit, full_page_writes: 'on' },
    trustSuperuser: 'postgres',
  });
  await cluster.psql('CREATE DATABASE pub; CREATE DATABASE sub;');
  for (const database of ['pub', 'sub']) await cluster.psql('CREATE TABLE items (id int8 PRIMARY KEY, body text NOT NULL);', { database });
  await cluster.psql("CREATE PUBLICATION p FOR TABLE items; SELECT pg_create_logical_replication_slot('s', 'pgoutput');", { database: 'pub' });
  // Created disabled, without the initial copy and on the slot made above (a subscription to the same cluster cannot make its own slot).
  await cluster.psql(`CREATE SUBSCRIPTION s CONNECTION 'host=${cluster.socketDir} port=${cluster.port} dbname=pub user=postgres' PUBLICATION p WITH (create_slot = false, slot_name = 's', enabled = false, copy_data = false);`, { database: 'sub' });
  const system = new ActorSystem({ node: 'bench-pg', logger: false });
  const connect = (database: string) => createPostgresPool(system, { host: '127.0.0.1', port: cluster.port, user: 'postgres', database, min: 1, max: 2 });
  return { cluster, pub: await connect('pub'), sub: await connect('sub'), system };
}

async function closePg(pair: PgPair): Promise<void> {
  await pair.pub.close();
  await pair.sub.close();
  pair.system.shutdown();
  await pair.cluster.stop();
}

const pgCount = async (db: Database): Promise<number> => Number((await db.query<{ n: bigint | null }>('SELECT max(id) AS n FROM items')).rows[0]!.n ?? 0);

async function pgCatchUp(n: number): Promise<number> {
  const pair = await pgPair();
  try {
    for (let i = 0; i < n; i += 500) {
      const m = Math.min(500, n - i);
      await pair.pub.query(`INSERT INTO items (id, body) SELECT g, 'row ' || g FROM generate_series($1::int8, $2::int8) g`, [i + 1, i + m]);
    }
    const started = performance.now();
    await pair.sub.query('ALTER SUBSCRIPTION s ENABLE');
    await until(async () => (await pgCount(pair.sub)) === n, 300_000);
    return performance.now() - started;
  } finally {
    await closePg(pair);
  }
}

async function pgLive(n: number): Promise<number> {
  const pair = await pgPair();
  try {
    await pair.sub.query('ALTER SUBSCRIPTION s ENABLE');
    // The apply worker is up once a first row goes through.
    await pair.pub.query(`INSERT INTO items (id, body) VALUES (0, 'warm-up')`);
    await until(async () => (await pair.sub.query('SELECT 1 FROM items WHERE id = 0')).rows.length === 1, 30_000);
    const started = performance.now();
    for (let i = 1; i <= n; i++) await pair.pub.query('INSERT INTO items (id, body) VALUES ($1, $2)', [i, `row ${i}`]);
    await until(async () => (await pgCount(pair.sub)) === n, 300_000);
    return performance.now() - started;
  } finally {
    await closePg(pair);
  }
}

async function run(options: SuiteOptions): Promise<SuiteResult> {
  const mode = options.quick ? 'quick' : 'full';
  const sizes = SIZES[mode];
  const selected = CASES.filter((name) => options.cases === undefined || options.cases.includes(name));
  const loadBefore = loadavg()[0]!;
  log(`replication suite (${mode}): ${selected.join(', ')}`);
  const durability = { molo: 'SQLite synchronous=normal (WAL), both replicas', postgres: 'synchronous_commit=off, fsync=on, both databases', 'postgres-sync': 'synchronous_commit=on, fsync=on, both databases' };
  const rows: Row[] = [];
  const table: string[][] = [];
  const ratios: string[] = [];
  let failed = false;
  const measure = async (name: string, impl: 'molo' | 'postgres', n: number, work: () => Promise<number>): Promise<number | undefined> => {
    try {
      const ms = await work();
      const opsPerS = rate(n, ms);
      rows.push({ case: name, impl, ops_per_s: opsPerS, entries: n, ms: Math.round(ms), durability: durability[impl], mode });
      table.push([name, impl, String(n), String(Math.round(ms)), opsPerS.toLocaleString('en-US'), durability[impl]]);
      return opsPerS;
    } catch (error) {
      failed = true;
      const message = error instanceof Error ? error.message : String(error);
      rows.push({ case: name, impl, ops_per_s: null, error: message, mode });
      table.push([name, impl, String(n), 'n/a', 'n/a', `failed: ${message.slice(0, 80)}`]);
      return undefined;
    }
  };
  for (const name of selected) {
    if (name === 'apply') {
      log('apply: molo');
      const opsPerS = await measure(name, 'molo', sizes.catchUp, () => applyOnly(sizes.catchUp));
      if (opsPerS !== undefined) ratios.push(`apply: ${opsPerS.toLocaleString('en-US')} entries/s (target ≥ 50,000)`);
      continue;
    }
    if (name === 'writer_overhead') {
      const result = await writerOverhead(sizes.writes);
      rows.push({ case: name, impl: 'molo', ops_per_s: result.withOplog, variant: 'with oplog', mode }, { case: name, impl: 'molo-no-oplog', ops_per_s: result.without, variant: 'without oplog', mode });
      table.push([name, 'molo, with oplog', String(sizes.writes), '', result.withOplog.toLocaleString('en-US'), durability.molo], [name, 'molo, no oplog', String(sizes.writes), '', result.without.toLocaleString('en-US'), durability.molo]);
      ratios.push(`${name}: with oplog at ${(result.withOplog / result.without).toFixed(2)}× of without`);
      continue;
    }
    if (name === 'lag') {
      const results: Partial<Record<'molo' | 'postgres' | 'postgres-sync', { p50: number; p99: number; rate: number }>> = {};
      for (const impl of ['molo', 'postgres', 'postgres-sync'] as const) {
        log(`lag: ${impl}`);
        try {
          const { lags, rows: n, ms } = await (impl === 'molo' ? moloLag(sizes.lagSeconds) : pgLag(sizes.lagSeconds, impl === 'postgres' ? 'off' : 'on'));
          const p50 = percentile(lags, 50);
          const p99 = percentile(lags, 99);
          results[impl] = { p50, p99, rate: rate(n, ms) };
          rows.push({ case: name, impl, ops_per_s: rate(n, ms), rows: n, p50_ms: Number(p50.toFixed(1)), p99_ms: Number(p99.toFixed(1)), durability: durability[impl], mode });
          table.push([name, impl, String(n), `p50 ${p50.toFixed(1)} / p99 ${p99.toFixed(1)}`, rate(n, ms).toLocaleString('en-US'), durability[impl]]);
        } catch (error) {
          failed = true;
          rows.push({ case: name, impl, ops_per_s: null, error: error instanceof Error ? error.message : String(error), mode });
        }
      }
      if (results.molo !== undefined && results.postgres !== undefined) {
        rows.push({ case: name, impl: 'ratio', ops_per_s: null, p99_molo_over_postgres: Number((results.molo.p99 / results.postgres.p99).toFixed(3)), mode });
        ratios.push(`lag: molo p50 at ${(results.molo.p50 / results.postgres.p50).toFixed(2)}×, p99 at ${(results.molo.p99 / results.postgres.p99).toFixed(2)}× of Postgres logical replication (lower is better)`);
      }
      if (results.molo !== undefined && results['postgres-sync'] !== undefined) {
        const sync = results['postgres-sync'];
        rows.push({ case: name, impl: 'ratio-sync', ops_per_s: null, p99_molo_over_postgres_sync: Number((results.molo.p99 / sync.p99).toFixed(3)), mode });
        ratios.push(`lag: molo p50 at ${(results.molo.p50 / sync.p50).toFixed(2)}×, p99 at ${(results.molo.p99 / sync.p99).toFixed(2)}× of Postgres with synchronous_commit=on`);
      }
      continue;
    }
    const n = name === 'catch_up' ? sizes.catchUp : sizes.live;
    log(`${name}: molo`);
    const molo = await measure(name, 'molo', n, () => (name === 'catch_up' ? moloCatchUp(n) : moloLive(n)));
    log(`${name}: postgres logical replication`);
    const pg = await measure(name, 'postgres', n, () => (name === 'catch_up' ? pgCatchUp(n) : pgLive(n)));
    if (molo !== undefined && pg !== undefined) {
      const ratio = molo / pg;
      rows.push({ case: name, impl: 'ratio', ops_per_s: null, molo_over_postgres: Number(ratio.toFixed(3)), mode });
      ratios.push(`${name}: molo at ${ratio.toFixed(2)}× of Postgres logical replication's rows/s${name === 'catch_up' ? ` (catch-up time ${(1 / ratio).toFixed(2)}× of its)` : ''}`);
    }
  }
  const report = [
    `replication (${mode}); ${cpus().length} cores; load ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after`,
    formatTable(['case', 'impl', 'rows', 'ms', 'rows/s', 'durability'], table),
    'writer_overhead is paired rounds: with and without a replicated model, alternating.',
    ...ratios,
  ].join('\n');
  return { rows, report, failed };
}

export const replicationSuite: Suite = { name: 'replication', description: 'oplog replication between embedded nodes vs PostgreSQL logical replication', cases: CASES, run };
