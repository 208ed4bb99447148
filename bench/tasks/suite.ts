/**
 * The `tasks` suite: Molo's task queue (SQLite, Postgres; `loop` and `thread` handlers) against
 * BullMQ (Redis), pg-boss and graphile-worker (the same Postgres), all from this process, on no-op
 * tasks: end to end (enqueue n in bulk, then process them at concurrency 10), enqueue throughput
 * (the first half of each end-to-end round, timed on its own), and idle-queue latency from one
 * enqueue to its handler's start (p50, p99). Rounds per system in turn; the median round and the
 * spread of all of them are reported, with the load average.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { withBenchPostgres } from '../data/server.js';
import {
  benchLog,
  formatTable,
  messageOf,
  ratioLines,
  ratioRow,
  roundFields,
  ROUNDS_NOTE,
  spreadCell,
  suiteHeader,
  timedWithin,
  type RatioTarget,
  type Row,
  type Suite,
  type SuiteOptions,
  type SuiteResult,
} from '../suite.js';
import { CONCURRENCY, percentile, type TaskContender } from './contender.js';
import { moloContenders } from './molo.js';
import { bullmqContender } from './peers/bullmq.js';
import { graphileWorkerContender } from './peers/graphile-worker.js';
import { pgBossContender } from './peers/pg-boss.js';

const CASES = ['end_to_end', 'enqueue', 'latency'] as const;
const SIZES = {
  full: { n: 10_000, rounds: 3, samples: 100 },
  quick: { n: 500, rounds: 1, samples: 10 },
} as const;
const PHASE_TIMEOUT_MS = 300_000;
const PEERS = ['bullmq', 'pg-boss', 'graphile-worker'] as const;

/** Molo ÷ BullMQ targets on end to end with `loop` handlers (reported, not asserted). */
const TARGETS: readonly RatioTarget[] = [
  { molo: 'molo-postgres-loop', peer: 'bullmq', ratio: 1 },
  { molo: 'molo-sqlite-loop', peer: 'bullmq', ratio: 2 },
];

const log = benchLog;
const timed = <T>(what: string, fn: () => Promise<T>): Promise<{ value: T; seconds: number }> => timedWithin(what, PHASE_TIMEOUT_MS, fn);

type Size = (typeof SIZES)[keyof typeof SIZES];

/** Runs one system's rounds and latency samples; answers its rows. */
async function measure(contender: TaskContender, cases: readonly string[], size: Size, mode: string): Promise<{ rows: Row[]; failed: boolean }> {
  const base = { impl: contender.impl, mode, concurrency: CONCURRENCY };
  try {
    await contender.open();
  } catch (error) {
    const why = `${contender.impl} unavailable: ${messageOf(error)}`;
    log(why);
    await contender.close().catch(() => undefined);
    return { rows: cases.map((name) => ({ case: name, ...base, ops_per_s: null, unavailable: why })), failed: false };
  }
  const rows: Row[] = [];
  let failed = false;
  const fail = (name: string, error: unknown): void => {
    failed = true;
    log(`${contender.impl} ${name} FAILED: ${messageOf(error)}`);
    rows.push({ case: name, ...base, ops_per_s: null, error: messageOf(error) });
  };
  try {
    if (cases.includes('end_to_end') || cases.includes('enqueue')) {
      const endToEnd: number[] = [];
      const enqueue: number[] = [];
      try {
        for (let round = 1; round <= size.rounds; round++) {
          await contender.reset();
          const started = performance.now();
          const stored = await timed(`${contender.impl} enqueue`, () => contender.enqueue(size.n));
          if (cases.includes('end_to_end')) await timed(`${contender.impl} process`, () => contender.process(size.n, CONCURRENCY));
          const total = (performance.now() - started) / 1_000;
          enqueue.push(size.n / stored.seconds);
          endToEnd.push(size.n / total);
          log(
            `${contender.impl} round ${round}: enqueue ${Math.round(size.n / stored.seconds).toLocaleString('en-US')}/s` +
              (cases.includes('end_to_end') ? `, end to end ${Math.round(size.n / total).toLocaleString('en-US')}/s` : '') +
              ` (load ${loadavg()[0]!.toFixed(1)})`,
          );
        }
        if (cases.includes('end_to_end')) rows.push({ case: 'end_to_end', ...base, n: size.n, ...roundFields(endToEnd) });
        if (cases.includes('enqueue')) rows.push({ case: 'enqueue', ...base, n: size.n, ...roundFields(enqueue) });
      } catch (error) {
        for (const name of ['end_to_end', 'enqueue']) if (cases.includes(name)) fail(name, error);
      }
    }
    if (cases.includes('latency')) {
      try {
        await contender.reset();
        const { value: samples } = await timed(`${contender.impl} latency`, () => contender.latency(size.samples, CONCURRENCY));
        const p50 = percentile(samples, 50);
        const p99 = percentile(samples, 99);
        log(`${contender.impl}: latency p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);
        rows.push({ case: 'latency', ...base, ops_per_s: null, samples: samples.length, p50_ms: Number(p50.toFixed(3)), p99_ms: Number(p99.toFixed(3)) });
      } catch (error) {
        fail('latency', error);
      }
    }
  } finally {
    await contender.close().catch((error: unknown) => log(`${contender.impl} close failed: ${messageOf(error)}`));
  }
  return { rows, failed };
}

function ratios(rows: readonly Row[], cases: readonly string[]): Row[] {
  const molos = [...new Set(rows.map((row) => row.impl).filter((impl) => impl.startsWith('molo-')))];
  return cases.filter((name) => name !== 'latency').map((name) => ratioRow(rows, name, molos, PEERS, name === 'end_to_end' ? TARGETS : undefined));
}

function report(rows: readonly Row[], ratioRows: readonly Row[]): string {
  const integer = (value: number): string => Math.round(value).toLocaleString('en-US');
  const note = (row: Row): string => (typeof row.unavailable === 'string' ? row.unavailable : typeof row.error === 'string' ? `FAILED: ${row.error}` : '');
  const throughput = formatTable(
    ['case', 'impl', 'tasks', 'tasks/s', 'spread', 'note'],
    rows
      .filter((row) => row.case !== 'latency')
      .map((row) => [row.case, row.impl, typeof row.n === 'number' ? integer(row.n) : '', typeof row.ops_per_s === 'number' ? integer(row.ops_per_s) : '', spreadCell(row), note(row)]),
  );
  const latency = formatTable(
    ['impl', 'samples', 'p50 ms', 'p99 ms', 'note'],
    rows
      .filter((row) => row.case === 'latency')
      .map((row) => [
        row.impl,
        typeof row.samples === 'number' ? String(row.samples) : '',
        typeof row.p50_ms === 'number' ? row.p50_ms.toFixed(2) : '',
        typeof row.p99_ms === 'number' ? row.p99_ms.toFixed(2) : '',
        note(row),
      ]),
  );
  const lines = ratioLines(ratioRows, 10);
  return [throughput, '', 'Idle-queue latency, enqueue → handler start:', latency, '', 'Ratios (Molo ÷ peer, tasks/s, higher is better):', ...lines].join('\n');
}

async function run(options: SuiteOptions): Promise<SuiteResult> {
  const mode = options.quick ? 'quick' : 'full';
  const size = SIZES[mode];
  const cases = CASES.filter((name) => options.cases === undefined || options.cases.includes(name));
  const loadBefore = loadavg()[0]!;
  log(`tasks suite (${mode}): ${cases.join(', ')}; ${size.n.toLocaleString('en-US')} no-op tasks × ${size.rounds} rounds, ${size.samples} latency samples`);
  const rows: Row[] = [];
  let failed = false;
  await withBenchPostgres('bench-tasks', async (system, pg) => {
    for (const contender of [...moloContenders(system, pg), bullmqContender(), pgBossContender(pg), graphileWorkerContender(pg)]) {
      const outcome = await measure(contender, cases, size, mode);
      rows.push(...outcome.rows);
      failed ||= outcome.failed;
    }
  });
  const ratioRows = ratios(rows, cases);
  const header = suiteHeader('tasks', options.quick, 'Postgres and Redis', loadBefore, [
    `End to end = enqueue n in bulk, then process them at concurrency ${CONCURRENCY} (workers started inside the timing); enqueue = the first part alone. ${ROUNDS_NOTE}`,
  ]);
  return { rows: [...rows, ...ratioRows], report: [...header, '', report(rows, ratioRows)].join('\n'), failed };
}

export const tasksSuite: Suite = {
  name: 'tasks',
  description: 'Molo task queue (SQLite, Postgres; loop and thread handlers) vs BullMQ, pg-boss, graphile-worker: end to end, enqueue, idle latency',
  cases: CASES,
  run,
};
