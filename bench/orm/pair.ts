/**
 * The ORM against the raw client alone, in many short paired rounds (`npx tsx bench/orm/pair.ts
 * [pg|sqlite] [workload,...] [rounds]`): each round runs both back to back, in alternating order,
 * and the median of the per-round time ratios is printed. On a loaded machine the suite's few long
 * rounds spread by 50 % or more, so an overhead of a few percent needs the pairing to show.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from '../../src/actors/index.js';
import type { Database } from '../../src/data/database.js';
import { createPostgresPool } from '../../src/data/postgres.js';
import { openSqlite } from '../../src/data/sqlite/index.js';
import { createBenchServer } from '../data/server.js';
import { moloOrmWork, moloRawWork } from './molo-impl.js';
import { seedPostgres, seedSqlite } from './suite.js';
import type { OrmWork } from './work.js';

const [backend = 'sqlite', list = 'insert,select_pk,pages,eager,insert_awaited,select_pk_awaited,bulk_insert', roundsText = '30'] = process.argv.slice(2);
const DATA = { authors: 1_000, postsPerAuthor: 5, commentsPerPost: 2 };
const POSTS = DATA.authors * DATA.postsPerAuthor;
const BATCH: Record<string, number> = { insert: 1_000, select_pk: 1_000, pages: 20, eager: 1, insert_awaited: 200, select_pk_awaited: 500, bulk_insert: 1_000 };
const scattered = (i: number): number => ((i * 1_000_003) % POSTS) + 1;

function step(work: OrmWork, workload: string, n: number): Promise<number> {
  switch (workload) {
    case 'insert':
      return work.insert(n);
    case 'select_pk':
      return work.selectByKey(n, scattered);
    case 'pages':
      return work.pages(n);
    case 'eager':
      return work.eager(n, 1_000);
    case 'insert_awaited':
      return work.insertAwaited(n);
    case 'select_pk_awaited':
      return work.selectByKeyAwaited(n, scattered);
    case 'bulk_insert':
      return work.bulkInsert(n);
    default:
      throw new Error(`unknown workload ${workload}`);
  }
}

async function timed(work: OrmWork, workload: string, n: number): Promise<number> {
  if (workload.includes('insert')) await work.resetInsert();
  const start = performance.now();
  await step(work, workload, n);
  return performance.now() - start;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

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
    const dir = await mkdtemp(join(tmpdir(), 'molo-orm-pair-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'orm.db');
    seedSqlite(file, DATA);
    open = () => openSqlite(system, { file });
  }
  const orm = moloOrmWork(await open(), DATA.authors);
  const raw = moloRawWork(await open(), DATA.authors);
  cleanups.unshift(() => orm.close(), () => raw.close());
  for (const workload of list.split(',')) {
    const n = BATCH[workload] ?? 100;
    for (let i = 0; i < 3; i++) {
      await timed(orm, workload, n);
      await timed(raw, workload, n);
    }
    const ratios: number[] = [];
    const ormMs: number[] = [];
    const rawMs: number[] = [];
    for (let round = 0; round < Number(roundsText); round++) {
      const first = round % 2 === 0;
      const a = await timed(first ? orm : raw, workload, n);
      const b = await timed(first ? raw : orm, workload, n);
      const [o, r] = first ? [a, b] : [b, a];
      ormMs.push(o);
      rawMs.push(r);
      ratios.push(o / r);
    }
    const pct = (x: number): string => `${((x - 1) * 100).toFixed(1)}%`;
    console.log(`${backend}_${workload}`.padEnd(26), `ORM over raw: median of paired ratios ${pct(median(ratios))}, ratio of medians ${pct(median(ormMs) / median(rawMs))} (n=${n}, ${ratios.length} pairs)`);
  }
} finally {
  for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  await system.shutdown();
}
