/**
 * One implementation of one orm case in a loop, for a CPU profile of the real path (server and
 * worker included), which overhead.ts (no database) cannot show:
 *
 *   node --cpu-prof --cpu-prof-dir=prof --import tsx bench/orm/profile.ts sqlite select_pk molo 5
 *
 * Arguments: backend (pg|sqlite), workload, impl (molo|molo-raw), seconds (default 5). Prints the
 * operations per second and the CPU µs per operation of this process.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from '../../src/actors/index.js';
import { createPostgresPool } from '../../src/data/postgres.js';
import { openSqlite } from '../../src/data/sqlite/index.js';
import { createBenchServer } from '../data/server.js';
import { moloOrmWork, moloRawWork } from './molo-impl.js';
import { seedPostgres, seedSqlite } from './suite.js';
import type { OrmWork } from './work.js';

const [backend = 'sqlite', workload = 'select_pk', impl = 'molo', secondsText = '5'] = process.argv.slice(2);
const DATA = { authors: 1_000, postsPerAuthor: 5, commentsPerPost: 2 };
const POSTS = DATA.authors * DATA.postsPerAuthor;
const BATCH: Record<string, number> = { insert: 2_000, select_pk: 2_000, pages: 100, eager: 1, insert_awaited: 500, select_pk_awaited: 1_000, bulk_insert: 2_000 };
const scattered = (i: number): number => ((i * 1_000_003) % POSTS) + 1;

async function step(work: OrmWork, n: number): Promise<void> {
  switch (workload) {
    case 'insert':
      await work.insert(n);
      return;
    case 'select_pk':
      await work.selectByKey(n, scattered);
      return;
    case 'pages':
      await work.pages(n);
      return;
    case 'eager':
      await work.eager(n, 1_000);
      return;
    case 'insert_awaited':
      await work.insertAwaited(n);
      return;
    case 'select_pk_awaited':
      await work.selectByKeyAwaited(n, scattered);
      return;
    case 'bulk_insert':
      await work.bulkInsert(n);
      return;
    default:
      throw new Error(`unknown workload ${workload}`);
  }
}

const system = new ActorSystem();
const cleanups: (() => Promise<void>)[] = [];
try {
  let work: OrmWork;
  const make = impl === 'molo' ? moloOrmWork : moloRawWork;
  if (backend === 'pg') {
    const server = await createBenchServer(1);
    cleanups.push(() => server.drop());
    await seedPostgres(system, server, DATA);
    work = make(await createPostgresPool(system, { host: server.host, port: server.port, user: server.user, database: server.database, min: 4, max: 4 }), DATA.authors);
  } else {
    const dir = await mkdtemp(join(tmpdir(), 'molo-orm-profile-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'orm.db');
    seedSqlite(file, DATA);
    work = make(await openSqlite(system, { file }), DATA.authors);
  }
  cleanups.unshift(() => work.close());
  const n = BATCH[workload] ?? 1_000;
  const inserts = workload.includes('insert');
  for (let i = 0; i < 3; i++) await step(work, n);
  const until = performance.now() + Number(secondsText) * 1_000;
  let ops = 0;
  let busy = 0;
  const cpu = process.cpuUsage();
  while (performance.now() < until) {
    if (inserts) await work.resetInsert();
    const start = performance.now();
    await step(work, n);
    busy += performance.now() - start;
    ops += n;
  }
  const used = process.cpuUsage(cpu);
  console.log(`${backend} ${workload} ${impl}: ${Math.round((ops / busy) * 1_000)} ops/s, ${((used.user + used.system) / ops).toFixed(1)} µs CPU/op (main thread + workers)`);
} finally {
  for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  system.shutdown();
}
