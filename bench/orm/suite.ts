/**
 * The `orm` suite: Molo's ORM against drizzle-orm (latest 0.x) on the same Postgres and SQLite,
 * same schema and queries, and against Molo's raw client running the ORM's own SQL (the ORM's
 * overhead). Cases, per backend: insert 10k rows in one transaction; 10k selects by primary key;
 * 1k filtered pages of 100 rows with a join; eager loading of authors → posts → comments over 1k
 * parents; and as a request handler calls it, each call awaited before the next: 2k single-row
 * inserts (autocommit) and 5k selects by key; plus a bulk insert of 10k rows (insertMany /
 * the ORM's chunked INSERTs on the raw client / drizzle's multi-row VALUES). drizzle runs twice where it can: its default API and
 * `.prepare()`d statements. Throughput is measured with bench/data's interleaved rounds (the median
 * round counts, spread reported); the ORM's overhead over raw with paired rounds (paired.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { ActorSystem } from '../../src/actors/index.js';
import { createPostgresPool } from '../../src/data/postgres.js';
import { openSqlite } from '../../src/data/sqlite/index.js';
import { POSTGRES, SQLITE } from '../../src/data/orm/index.js';
import { measureCase, type Absent, type CaseSpec, type Contender } from '../data/rounds.js';
import { createBenchServer, type BenchServer } from '../data/server.js';
import { messageOf, ROUNDS_NOTE, timedWithin, type Row, type Suite, type SuiteOptions, type SuiteResult } from '../suite.js';
import { DRIZZLE_PREPARED_CASES, drizzlePgWork, drizzleSqliteWork } from './drizzle-impl.js';
import { moloOrmWork, moloRawWork } from './molo-impl.js';
import { pairedOverhead, pairedText, type PairedOverhead } from './paired.js';
import { ormReport, withOrmRatios } from './report.js';
import { MODELS, type Dataset } from './schema.js';
import { expectedEagerComments, expectedPageRows, type OrmWork } from './work.js';

const WORKLOADS = ['insert', 'select_pk', 'pages', 'eager', 'insert_awaited', 'select_pk_awaited', 'bulk_insert'] as const;
type Workload = (typeof WORKLOADS)[number];
export const ORM_CASES: readonly string[] = [...WORKLOADS.map((w) => `pg_${w}`), ...WORKLOADS.map((w) => `sqlite_${w}`)];

interface Sizes {
  readonly data: Dataset;
  readonly parents: number;
  readonly rounds: number;
  /** Pairs of the paired overhead measurement (paired.ts), each run a `pairDivisor`th of a round. */
  readonly pairs: number;
  /** Pairs run and dropped first (each pair opens fresh connections: most of a quick run's time). */
  readonly warmupPairs: number;
  readonly pairDivisor: number;
  /** Reader threads of each Molo SQLite handle: a quick run opens one thread per handle, not three (most of its time). */
  readonly sqliteReaders: number;
  readonly n: Readonly<Record<Workload, number>>;
  readonly warmup: Readonly<Record<Workload, number>>;
}

const SIZES: Readonly<Record<'full' | 'quick', Sizes>> = {
  full: {
    data: { authors: 1_000, postsPerAuthor: 5, commentsPerPost: 2 },
    parents: 1_000,
    rounds: 3,
    pairs: 20,
    warmupPairs: 2,
    pairDivisor: 10,
    sqliteReaders: 2,
    n: { insert: 10_000, select_pk: 10_000, pages: 1_000, eager: 10, insert_awaited: 2_000, select_pk_awaited: 5_000, bulk_insert: 10_000 },
    warmup: { insert: 2_000, select_pk: 2_000, pages: 100, eager: 2, insert_awaited: 500, select_pk_awaited: 1_000, bulk_insert: 2_000 },
  },
  quick: {
    data: { authors: 100, postsPerAuthor: 5, commentsPerPost: 2 },
    parents: 100,
    rounds: 1,
    pairs: 2,
    warmupPairs: 0,
    pairDivisor: 1,
    sqliteReaders: 0,
    n: { insert: 200, select_pk: 200, pages: 20, eager: 1, insert_awaited: 50, select_pk_awaited: 50, bulk_insert: 200 },
    warmup: { insert: 50, select_pk: 50, pages: 5, eager: 1, insert_awaited: 20, select_pk_awaited: 20, bulk_insert: 50 },
  },
};

const UNITS: Readonly<Record<Workload, string>> = {
  insert: 'rows',
  select_pk: 'selects',
  pages: 'pages',
  eager: 'loads',
  insert_awaited: 'rows',
  select_pk_awaited: 'selects',
  bulk_insert: 'rows',
};
const POOL_SIZE = 4;

const log = (message: string): void => void process.stderr.write(`${message}\n`);

const scattered = (i: number, n: number): number => ((i * 1_000_003) % n) + 1;

function expected(workload: Workload, sizes: Sizes, n: number): number {
  const posts = sizes.data.authors * sizes.data.postsPerAuthor;
  switch (workload) {
    case 'insert':
    case 'insert_awaited':
    case 'bulk_insert':
      return n;
    case 'select_pk':
    case 'select_pk_awaited': {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += scattered(i, posts);
      return sum;
    }
    case 'pages':
      return expectedPageRows(n, sizes.data);
    case 'eager':
      return n * expectedEagerComments(sizes.data, sizes.parents);
  }
}

function contender(impl: string, workload: Workload, sizes: Sizes, open: () => Promise<OrmWork>): Contender {
  let work: OrmWork | undefined;
  const posts = sizes.data.authors * sizes.data.postsPerAuthor;
  return {
    impl,
    open: async () => void (work = await open()),
    reset: workload === 'insert' || workload === 'insert_awaited' || workload === 'bulk_insert' ? () => work!.resetInsert() : undefined,
    run: (n) => {
      switch (workload) {
        case 'insert':
          return work!.insert(n);
        case 'select_pk':
          return work!.selectByKey(n, (i) => scattered(i, posts));
        case 'pages':
          return work!.pages(n);
        case 'eager':
          return work!.eager(n, sizes.parents);
        case 'insert_awaited':
          return work!.insertAwaited(n);
        case 'select_pk_awaited':
          return work!.selectByKeyAwaited(n, (i) => scattered(i, posts));
        case 'bulk_insert':
          return work!.bulkInsert(n);
      }
    },
    close: async () => {
      const current = work;
      work = undefined;
      await current?.close();
    },
  };
}

type Impls = Record<'molo' | 'molo-raw' | 'drizzle' | 'drizzle-prepared', () => Promise<OrmWork>>;

/** A case: its throughput rounds (every implementation), then the ORM's paired overhead over raw. */
interface OrmCase {
  readonly spec: CaseSpec;
  readonly orm: Contender;
  readonly raw: Contender;
  readonly pairN: number;
}

function cases(prefix: 'pg' | 'sqlite', sizes: Sizes, selected: readonly string[], impls: Impls): OrmCase[] {
  return WORKLOADS.filter((w) => selected.includes(`${prefix}_${w}`)).map((workload) => ({
    spec: {
      name: `${prefix}_${workload}`,
      unit: UNITS[workload],
      n: sizes.n[workload],
      warmupN: sizes.warmup[workload],
      rounds: sizes.rounds,
      expected: (n: number) => expected(workload, sizes, n),
      contenders: Object.entries(impls).map(([impl, open]): Contender | Absent =>
        impl === 'drizzle-prepared' && !DRIZZLE_PREPARED_CASES.includes(workload)
          ? { impl, unavailable: 'n/a: measured with the default API only (see DRIZZLE_PREPARED_CASES)' }
          : contender(impl, workload, sizes, open),
      ),
    },
    orm: contender('molo', workload, sizes, impls.molo),
    raw: contender('molo-raw', workload, sizes, impls['molo-raw']),
    pairN: Math.max(1, Math.round(sizes.n[workload] / sizes.pairDivisor)),
  }));
}

const PAIRED_TIMEOUT_MS = 600_000;

/** The paired overhead of one case on fresh connections; undefined (logged) when a side fails. */
async function paired(item: OrmCase, sizes: Sizes): Promise<PairedOverhead | undefined> {
  const { spec, orm, raw, pairN } = item;
  try {
    const { value } = await timedWithin(`${spec.name} paired overhead`, PAIRED_TIMEOUT_MS, async () => {
      await orm.open();
      await raw.open();
      return pairedOverhead(orm, raw, { n: pairN, pairs: sizes.pairs, warmupPairs: sizes.warmupPairs, expected: spec.expected(pairN) });
    });
    log(`  ${spec.name}: ORM over raw, paired: ${pairedText(value)}`);
    return value;
  } catch (error) {
    log(`  ${spec.name}: paired overhead FAILED: ${messageOf(error)}`);
    return undefined;
  } finally {
    await orm.close().catch(() => undefined);
    await raw.close().catch(() => undefined);
  }
}

async function runCases(list: readonly OrmCase[], sizes: Sizes, mode: string, rows: Row[], overheads: Map<string, PairedOverhead>): Promise<boolean> {
  let failed = false;
  for (const item of list) {
    const { spec } = item;
    log(`${spec.name}: ${spec.n.toLocaleString('en-US')} ${spec.unit}, ${spec.rounds} round(s) after a warm-up of ${spec.warmupN.toLocaleString('en-US')}`);
    const outcome = await measureCase(spec, mode);
    rows.push(...outcome.rows);
    failed ||= outcome.failed;
    const overhead = await paired(item, sizes);
    if (overhead === undefined) failed = true;
    else overheads.set(spec.name, overhead);
  }
  return failed;
}

export async function seedPostgres(system: ActorSystem, server: BenchServer, data: Dataset): Promise<void> {
  const db = await createPostgresPool(system, { host: server.host, port: server.port, user: server.user, database: server.database, min: 1, max: 1 });
  try {
    for (const model of MODELS) for (const statement of POSTGRES.createTableStatements(model.meta)) await db.query(statement);
    const posts = data.authors * data.postsPerAuthor;
    await db.query(`INSERT INTO authors (name, active) SELECT 'author-' || g, g % 2 = 1 FROM generate_series(1, ${data.authors}) g`);
    await db.query(`INSERT INTO posts (author_id, title, score) SELECT (g - 1) % ${data.authors} + 1, 'post-' || g, g % 100 FROM generate_series(1, ${posts}) g`);
    await db.query(`INSERT INTO comments (post_id, body) SELECT (g - 1) % ${posts} + 1, 'comment-' || g FROM generate_series(1, ${posts * data.commentsPerPost}) g`);
    await db.query('VACUUM ANALYZE');
  } finally {
    await db.close();
  }
}

export function seedSqlite(file: string, data: Dataset): void {
  const db = new BetterSqlite3(file);
  try {
    db.pragma('journal_mode = WAL');
    for (const model of MODELS) for (const statement of SQLITE.createTableStatements(model.meta)) db.exec(statement);
    const posts = data.authors * data.postsPerAuthor;
    const author = db.prepare('INSERT INTO authors (name, active) VALUES (?, ?)');
    const post = db.prepare('INSERT INTO posts (author_id, title, score) VALUES (?, ?, ?)');
    const comment = db.prepare('INSERT INTO comments (post_id, body) VALUES (?, ?)');
    db.transaction(() => {
      for (let g = 1; g <= data.authors; g++) author.run(`author-${g}`, g % 2);
      for (let g = 1; g <= posts; g++) post.run(((g - 1) % data.authors) + 1, `post-${g}`, g % 100);
      for (let g = 1; g <= posts * data.commentsPerPost; g++) comment.run(((g - 1) % posts) + 1, `comment-${g}`);
    })();
    db.exec('ANALYZE');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

async function runPostgres(system: ActorSystem, sizes: Sizes, selected: readonly string[], mode: string, rows: Row[], overheads: Map<string, PairedOverhead>): Promise<boolean> {
  if (!selected.some((name) => name.startsWith('pg_'))) return false;
  let server: BenchServer;
  try {
    server = await createBenchServer(1);
  } catch (error) {
    const why = `postgres unavailable: ${messageOf(error)}`;
    log(why);
    for (const name of selected.filter((n) => n.startsWith('pg_'))) for (const impl of ['molo', 'molo-raw', 'drizzle', 'drizzle-prepared']) rows.push({ case: name, impl, ops_per_s: null, mode, unavailable: why });
    return false;
  }
  log(`postgres: database ${server.database} on ${server.host}:${server.port}`);
  try {
    await seedPostgres(system, server, sizes.data);
    const target = { host: server.host, port: server.port, user: server.user, database: server.database };
    const pool = () => createPostgresPool(system, { ...target, min: POOL_SIZE, max: POOL_SIZE });
    const authors = sizes.data.authors;
    return await runCases(
      cases('pg', sizes, selected, {
        molo: async () => moloOrmWork(await pool(), authors),
        'molo-raw': async () => moloRawWork(await pool(), authors),
        drizzle: async () => drizzlePgWork(target, POOL_SIZE, authors),
        'drizzle-prepared': async () => drizzlePgWork(target, POOL_SIZE, authors, true),
      }),
      sizes,
      mode,
      rows,
      overheads,
    );
  } finally {
    await server.drop().catch((error: unknown) => log(`dropping ${server.database} failed: ${messageOf(error)}`));
  }
}

async function runSqlite(system: ActorSystem, sizes: Sizes, selected: readonly string[], mode: string, rows: Row[], overheads: Map<string, PairedOverhead>): Promise<boolean> {
  if (!selected.some((name) => name.startsWith('sqlite_'))) return false;
  const dir = await mkdtemp(join(tmpdir(), 'molo-bench-orm-'));
  log(`sqlite: files in ${dir}`);
  try {
    const file = join(dir, 'orm.db');
    seedSqlite(file, sizes.data);
    const authors = sizes.data.authors;
    return await runCases(
      cases('sqlite', sizes, selected, {
        molo: async () => moloOrmWork(await openSqlite(system, { file, readers: sizes.sqliteReaders }), authors),
        'molo-raw': async () => moloRawWork(await openSqlite(system, { file, readers: sizes.sqliteReaders }), authors),
        drizzle: async () => drizzleSqliteWork(file, authors),
        'drizzle-prepared': async () => drizzleSqliteWork(file, authors, true),
      }),
      sizes,
      mode,
      rows,
      overheads,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function run(options: SuiteOptions): Promise<SuiteResult> {
  const mode = options.quick ? 'quick' : 'full';
  const sizes = SIZES[mode];
  const selected = ORM_CASES.filter((name) => options.cases === undefined || options.cases.includes(name));
  const loadBefore = loadavg()[0]!;
  log(`orm suite (${mode}): ${selected.join(', ')}`);
  const rows: Row[] = [];
  const system = new ActorSystem();
  const overheads = new Map<string, PairedOverhead>();
  let failed = false;
  try {
    failed = (await runPostgres(system, sizes, selected, mode, rows, overheads)) || failed;
    failed = (await runSqlite(system, sizes, selected, mode, rows, overheads)) || failed;
  } finally {
    system.shutdown();
  }
  const { rows: table, ratios } = withOrmRatios(rows, selected, overheads);
  const header = [
    `orm suite, ${mode} run: node ${process.version}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores); Postgres on the same machine`,
    `Molo's ORM vs drizzle-orm (postgres.js / better-sqlite3) and vs Molo's raw client running the ORM's SQL; pools of ${POOL_SIZE} connections.`,
    `Dataset: ${sizes.data.authors} authors (half active) × ${sizes.data.postsPerAuthor} posts × ${sizes.data.commentsPerPost} comments; eager loads cover ${sizes.parents} parents.`,
    `Interleaved rounds after a warm-up; ${ROUNDS_NOTE}`,
    `ORM overhead: median over ${sizes.pairs} pairs of (ORM time ÷ raw time) − 1, each pair the two back to back in alternating order on fresh connections, a ${sizes.pairDivisor === 1 ? 'full round' : `${sizes.pairDivisor}th of a round`} each.`,
    `1-minute load average: ${loadBefore.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end` + (loadBefore > cpus().length / 2 ? ' (other work was running: expect noise)' : ''),
  ];
  if (options.quick) header.push(`Quick run: tiny sizes and SQLite handles with ${sizes.sqliteReaders} reader threads; the numbers show the harness works, not how fast anything is.`);
  return { rows: [...table, ...ratios], report: [...header, '', ormReport(table, ratios)].join('\n'), failed };
}

export const ormSuite: Suite = {
  name: 'orm',
  description: "Molo ORM vs drizzle-orm and vs Molo's raw client, Postgres and SQLite: insert, select by key, joined pages, eager loads",
  cases: ORM_CASES,
  run,
};
