/**
 * The ORM against Molo's raw client outside the suite, for finding where a gap comes from:
 *
 *   npx tsx bench/orm/diagnose.ts pair [pg|sqlite] [workload,...] [rounds]
 *     the suite's paired overhead measurement (paired.ts) at other sizes: many short rounds, ORM and
 *     raw back to back in alternating order, the median of the per-pair time ratios.
 *   npx tsx bench/orm/diagnose.ts aa [pg|sqlite] [workload,...] [pairs]
 *     the same, raw client against a second raw client: what the method shows when there is
 *     nothing to find (its bias and its noise at the current load).
 *   MOLO_PROFILE=out.cpuprofile npx tsx bench/orm/diagnose.ts one [pg|sqlite] workload [molo|molo-raw] [seconds]
 *     one implementation of one workload in a loop; prints the operations, ops/s and CPU µs/op, and
 *     with MOLO_PROFILE a main-thread CPU profile of the timed loop alone: the real path (server and
 *     worker included), which overhead.ts (no database) cannot show.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from '../../src/actors/index.js';
import type { Database } from '../../src/data/database.js';
import { createPostgresPool } from '../../src/data/postgres.js';
import { openSqlite } from '../../src/data/sqlite/index.js';
import { createBenchServer } from '../data/server.js';
import { moloOrmWork, moloRawWork } from './molo-impl.js';
import { pairedOverhead, pairedText, type PairSide } from './paired.js';
import { seedPostgres, seedSqlite } from './suite.js';
import type { OrmWork } from './work.js';

const DATA = { authors: 1_000, postsPerAuthor: 5, commentsPerPost: 2 };
const POSTS = DATA.authors * DATA.postsPerAuthor;
const BATCH: Record<string, number> = { insert: 1_000, select_pk: 1_000, pages: 20, eager: 1, insert_awaited: 200, select_pk_awaited: 500, bulk_insert: 1_000 };
const scattered = (i: number): number => ((i * 1_000_003) % POSTS) + 1;

const STEPS: Readonly<Record<string, (work: OrmWork, n: number) => Promise<number>>> = {
  insert: (work, n) => work.insert(n),
  select_pk: (work, n) => work.selectByKey(n, scattered),
  pages: (work, n) => work.pages(n),
  eager: (work, n) => work.eager(n, DATA.authors),
  insert_awaited: (work, n) => work.insertAwaited(n),
  select_pk_awaited: (work, n) => work.selectByKeyAwaited(n, scattered),
  bulk_insert: (work, n) => work.bulkInsert(n),
};

function step(work: OrmWork, workload: string, n: number): Promise<number> {
  const run = STEPS[workload];
  if (run === undefined) throw new Error(`unknown workload ${workload} (one of ${Object.keys(STEPS).join(', ')})`);
  return run(work, n);
}

/** Milliseconds of one batch (the insert table emptied first, untimed). */
async function timed(work: OrmWork, workload: string, n: number): Promise<number> {
  if (workload.includes('insert')) await work.resetInsert();
  const start = performance.now();
  await step(work, workload, n);
  return performance.now() - start;
}

/** A side of the suite's paired measurement (paired.ts: the same method and figures). */
const side = (work: OrmWork, workload: string): PairSide => ({
  reset: workload.includes('insert') ? () => work.resetInsert() : undefined,
  run: (n) => step(work, workload, n),
});

async function pair(backend: string, orm: OrmWork, raw: OrmWork, workloads: string[], pairs: number): Promise<void> {
  for (const workload of workloads) {
    const n = BATCH[workload] ?? 100;
    const result = await pairedOverhead(side(orm, workload), side(raw, workload), { n, pairs, warmupPairs: 3 });
    console.log(`${backend}_${workload}`.padEnd(26), `ORM over raw: ${pairedText(result)}`);
  }
}

/** A CPU profile of the main thread over the timed loop only (no start-up, no seeding), written to `file`. */
async function profiled<T>(file: string | undefined, body: () => Promise<T>): Promise<T> {
  if (file === undefined) return body();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await body();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
  }
}

async function loop(label: string, work: OrmWork, workload: string, seconds: number): Promise<void> {
  const n = BATCH[workload] ?? 100;
  for (let i = 0; i < 3; i++) await timed(work, workload, n);
  await profiled(process.env.MOLO_PROFILE, () => timedLoop(label, work, workload, n, seconds));
}

async function timedLoop(label: string, work: OrmWork, workload: string, n: number, seconds: number): Promise<void> {
  const until = performance.now() + seconds * 1_000;
  let ops = 0;
  let busy = 0;
  const cpu = process.cpuUsage();
  while (performance.now() < until) {
    busy += await timed(work, workload, n);
    ops += n;
  }
  const used = process.cpuUsage(cpu);
  console.log(`${label}: ${ops} ops, ${Math.round((ops / busy) * 1_000)} ops/s, ${((used.user + used.system) / ops).toFixed(1)} µs CPU/op (main thread + workers)`);
}

const [mode = 'pair', backend = 'sqlite', ...rest] = process.argv.slice(2);
const system = new ActorSystem();
const cleanups: (() => Promise<void>)[] = [];
try {
  let open: () => Promise<Database>;
  if (backend === 'pg') {
    const server = await createBenchServer(1);
    cleanups.push(() => server.drop());
    await seedPostgres(system, server, DATA);
    open = () => createPostgresPool(system, { host: server.host, port: server.port, user: server.user, database: server.database, min: 4, max: 4 });
  } else {
    const dir = await mkdtemp(join(tmpdir(), 'molo-orm-diagnose-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'orm.db');
    seedSqlite(file, DATA);
    open = () => openSqlite(system, { file });
  }
  const opened = async (make: typeof moloOrmWork): Promise<OrmWork> => {
    const work = make(await open(), DATA.authors);
    cleanups.unshift(() => work.close());
    return work;
  };
  if (mode === 'one') {
    const [workload = 'select_pk', impl = 'molo', seconds = '5'] = rest;
    await loop(`${backend} ${workload} ${impl}`, await opened(impl === 'molo' ? moloOrmWork : moloRawWork), workload, Number(seconds));
  } else {
    const [workloads = Object.keys(STEPS).join(','), rounds = '30'] = rest;
    await pair(backend, await opened(mode === 'aa' ? moloRawWork : moloOrmWork), await opened(moloRawWork), workloads.split(','), Number(rounds));
  }
} finally {
  for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  await system.shutdown();
}
