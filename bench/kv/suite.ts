/**
 * The `kv` suite: Molo's cache against lru-cache and async-cache-dedupe, Molo's KV stores (memory,
 * SQLite, Postgres) against Redis through ioredis, and the topic fan-out rows of bench/topics.ts.
 * Everything runs in this process, measured as bench/data/rounds.ts does (warm-up, interleaved
 * rounds, the median round counts, spread reported).
 */
import { cpus, loadavg } from 'node:os';
import { ActorSystem } from '../../src/actors/index.js';
import { measureCase } from '../data/rounds.js';
import { createBenchServer, type BenchServer } from '../data/server.js';
import { ROUNDS_NOTE, type Row, type Suite, type SuiteOptions, type SuiteResult } from '../suite.js';
import { CACHE_CASES, cacheCases, type CacheSizes } from './cache-cases.js';
import { KV_CASES, kvCases, type KvSizes } from './kv-cases.js';
import { ratioLines, resultTable, withRatios } from './report.js';

const TOPIC_CASE_NAMES = ['topic_fanout', 'topic_fanout_actors'];
const CASES: readonly string[] = [...CACHE_CASES, ...KV_CASES, ...TOPIC_CASE_NAMES];

const SIZES: Readonly<Record<'full' | 'quick', { readonly cache: CacheSizes; readonly kv: KvSizes }>> = {
  full: { cache: { hits: 5_000_000, computes: 200_000, rounds: 5 }, kv: { memory: 200_000, sql: 20_000, rounds: 5 } },
  quick: { cache: { hits: 50_000, computes: 2_000, rounds: 1 }, kv: { memory: 2_000, sql: 300, rounds: 1 } },
};

const log = (message: string): void => void process.stderr.write(`${message}\n`);
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

type TopicsCases = (options: { readonly quick?: boolean; readonly cases?: readonly string[] }) => Promise<Row[]>;

/** bench/topics.ts is another suite's module: loaded when present, else its rows say why not. */
async function loadTopics(): Promise<TopicsCases | string> {
  try {
    const topics = (await import(new URL('../topics.js', import.meta.url).href)) as { topicsCases?: unknown };
    return typeof topics.topicsCases === 'function' ? (topics.topicsCases as TopicsCases) : 'bench/topics.ts does not export topicsCases()';
  } catch (error) {
    return `bench/topics.ts not available: ${messageOf(error).split('\n')[0]}`;
  }
}

async function runTopics(selected: readonly string[], quick: boolean, mode: string, rows: Row[]): Promise<boolean> {
  const names = TOPIC_CASE_NAMES.filter((name) => selected.includes(name));
  if (names.length === 0) return false;
  const topics = await loadTopics();
  if (typeof topics === 'string') {
    log(`topics: not available (${topics})`);
    rows.push(...names.map((name) => ({ case: name, impl: 'molo', ops_per_s: null, mode, unavailable: `not available: ${topics}` })));
    return false;
  }
  log(`topics: ${names.join(', ')}`);
  try {
    rows.push(...(await topics({ quick, cases: names })));
    return rows.some((row) => names.includes(row.case) && typeof row.error === 'string');
  } catch (error) {
    rows.push(...names.map((name) => ({ case: name, impl: 'molo', ops_per_s: null, mode, error: messageOf(error) })));
    return true;
  }
}

async function run(options: SuiteOptions): Promise<SuiteResult> {
  const mode = options.quick ? 'quick' : 'full';
  const sizes = SIZES[mode];
  const selected = CASES.filter((name) => options.cases === undefined || options.cases.includes(name));
  const loadBefore = loadavg()[0]!;
  log(`kv suite (${mode}): ${selected.join(', ')}`);

  const rows: Row[] = [];
  let failed = false;
  const system = new ActorSystem({ node: 'bench-kv' });
  let pg: BenchServer | undefined;
  let pgUnavailable: string | undefined;
  try {
    if (selected.some((name) => name.startsWith('kv_postgres'))) {
      try {
        pg = await createBenchServer(0);
        log(`postgres: database ${pg.database} on ${pg.host}:${pg.port}`);
      } catch (error) {
        pgUnavailable = `postgres unavailable: ${messageOf(error)}`;
        log(pgUnavailable);
      }
    }
    const specs = [...cacheCases(sizes.cache), ...(await kvCases({ system, pg, pgUnavailable }, sizes.kv, selected))];
    for (const spec of specs) {
      if (!selected.includes(spec.name)) continue;
      log(`${spec.name}: ${spec.n.toLocaleString('en-US')} ${spec.unit}, ${spec.rounds} round(s) after a warm-up of ${spec.warmupN.toLocaleString('en-US')}`);
      const outcome = await measureCase(spec, mode);
      rows.push(...outcome.rows);
      failed ||= outcome.failed;
    }
    failed = (await runTopics(selected, options.quick, mode, rows)) || failed;
  } finally {
    system.shutdown();
    await pg?.drop().catch((error: unknown) => log(`dropping ${pg!.database} failed: ${messageOf(error)}`));
  }

  const isTopic = (row: Row): boolean => TOPIC_CASE_NAMES.includes(row.case);
  const { rows: table, ratios } = withRatios(
    rows.filter((row) => row.impl !== 'ratio' && !isTopic(row)),
    selected.filter((name) => !TOPIC_CASE_NAMES.includes(name)),
  );
  // The topic rows come with their own ratio row.
  const topicRows = rows.filter((row) => row.impl !== 'ratio' && isTopic(row));
  const allRatios = [...ratios, ...rows.filter((row) => row.impl === 'ratio' && isTopic(row))];
  const header = [
    `kv suite, ${mode} run: node ${process.version}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores); Postgres and Redis on the same machine`,
    `All implementations run in this process, interleaved round by round after a warm-up; ${ROUNDS_NOTE}`,
    `1-minute load average: ${loadBefore.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end` +
      (loadBefore > cpus().length / 2 ? ' (other work was running: expect noise)' : ''),
  ];
  if (options.quick) header.push('Quick run: tiny sizes; the numbers show the harness works, not how fast anything is.');
  const report = [...header, '', resultTable([...table, ...topicRows]), '', ratioLines(allRatios)];
  return { rows: [...table, ...topicRows, ...allRatios], report: report.join('\n'), failed };
}

export const kvSuite: Suite = {
  name: 'kv',
  description: 'Molo cache vs lru-cache/async-cache-dedupe, KV (memory, SQLite, Postgres) vs Redis, topic fan-out',
  cases: CASES,
  run,
};
