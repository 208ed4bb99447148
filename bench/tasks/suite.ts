/**
 * The `tasks` suite: Molo's task queue (SQLite, Postgres; `loop` and `thread` handlers) against
 * BullMQ (Redis), pg-boss and graphile-worker (the same Postgres), all from this process, on no-op
 * tasks, timing what a user waits for. Each round, per system:
 * - bulk: enqueue n in bulk (`enqueue`), start the workers (start-up apart), process until the n-th
 *   completion is recorded (`process`: from the workers being up), stop (shutdown apart);
 *   `end_to_end` is n over enqueue + start-up + processing;
 * - single: enqueue n one call at a time, 10 in flight (`enqueue_single`), then the same processing;
 *   `first_to_last` is n over the time from the first enqueue to the last recorded completion.
 * Then the idle-queue latency from one enqueue to its handler's start (p50, p99). Rounds per system
 * in turn; the median round and the spread of all of them are reported, with each system's
 * durability setting and the load average.
 */
import { loadavg } from 'node:os';
import { withBenchPostgres } from '../data/server.js';
import {
  benchLog,
  formatTable,
  median,
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
import { CONCURRENCY, ENQUEUE_IN_FLIGHT, enqueueInBatches, enqueueOneByOne, measureLatency, percentile, processAll, type ProcessTimes, type TaskContender } from './contender.js';
import { moloContenders } from './molo.js';
import { bullmqContender } from './peers/bullmq.js';
import { graphileWorkerContender } from './peers/graphile-worker.js';
import { pgBossContender } from './peers/pg-boss.js';

const CASES = ['end_to_end', 'process', 'enqueue', 'enqueue_single', 'first_to_last', 'latency'] as const;
/** Cases of the bulk and the single phase of a round. */
const BULK_CASES = ['end_to_end', 'process', 'enqueue'];
const SINGLE_CASES = ['enqueue_single', 'first_to_last'];
const SIZES = {
  full: { n: 10_000, rounds: 3, samples: 100 },
  quick: { n: 500, rounds: 1, samples: 10 },
} as const;
const PHASE_TIMEOUT_MS = 300_000;
const PEERS = ['bullmq', 'pg-boss', 'graphile-worker'] as const;

/** The targets, Molo ÷ peer (reported, not asserted). */
const TARGETS: Readonly<Record<string, readonly RatioTarget[]>> = {
  end_to_end: [
    { molo: 'molo-postgres-loop', peer: 'bullmq', ratio: 1 },
    { molo: 'molo-sqlite-loop', peer: 'bullmq', ratio: 2 },
  ],
  process: [
    { molo: 'molo-postgres-loop', peer: 'bullmq', ratio: 1 },
    { molo: 'molo-postgres-loop', peer: 'graphile-worker', ratio: 1 },
    { molo: 'molo-sqlite-loop', peer: 'bullmq', ratio: 1.5 },
  ],
  enqueue_single: [
    { molo: 'molo-postgres-loop', peer: 'bullmq', ratio: 1 },
    { molo: 'molo-sqlite-loop', peer: 'bullmq', ratio: 1 },
  ],
  first_to_last: [
    { molo: 'molo-postgres-loop', peer: 'bullmq', ratio: 1 },
    { molo: 'molo-sqlite-loop', peer: 'bullmq', ratio: 1 },
  ],
};

const log = benchLog;
const timed = <T>(what: string, fn: () => Promise<T>): Promise<{ value: T; seconds: number }> => timedWithin(what, PHASE_TIMEOUT_MS, fn);
const rate = (n: number, ms: number): number => (n * 1_000) / Math.max(ms, 1e-3);
const integer = (value: number): string => Math.round(value).toLocaleString('en-US');

type Size = (typeof SIZES)[keyof typeof SIZES];

/** Per-case rates of every round, and the start-up and shutdown times beside them. */
class RoundLog {
  readonly rates = new Map<string, number[]>();
  readonly startupMs: number[] = [];
  readonly shutdownMs: number[] = [];
  add(name: string, value: number): void {
    let list = this.rates.get(name);
    if (list === undefined) this.rates.set(name, (list = []));
    list.push(value);
  }
  phases(times: ProcessTimes): void {
    this.startupMs.push(times.startupMs);
    this.shutdownMs.push(times.shutdownMs);
  }
}

async function bulkPhase(contender: TaskContender, size: Size, rounds: RoundLog): Promise<string> {
  await contender.reset();
  const enqueued = await timed(`${contender.impl} enqueue`, () => enqueueInBatches(contender, size.n));
  const { value: times } = await timed(`${contender.impl} process`, () => processAll(contender, size.n, CONCURRENCY));
  rounds.add('enqueue', size.n / enqueued.seconds);
  rounds.add('process', rate(size.n, times.processingMs));
  rounds.add('end_to_end', rate(size.n, enqueued.seconds * 1_000 + times.untilLastMs));
  rounds.phases(times);
  return `bulk enqueue ${integer(size.n / enqueued.seconds)}/s, process ${integer(rate(size.n, times.processingMs))}/s (start-up ${times.startupMs.toFixed(0)} ms, first start ${times.firstStartMs.toFixed(0)} ms, shutdown ${times.shutdownMs.toFixed(0)} ms)`;
}

async function singlePhase(contender: TaskContender, size: Size, rounds: RoundLog): Promise<string> {
  await contender.reset();
  const enqueued = await timed(`${contender.impl} enqueue_single`, () => enqueueOneByOne(contender, size.n));
  const { value: times } = await timed(`${contender.impl} process`, () => processAll(contender, size.n, CONCURRENCY));
  const untilLast = enqueued.seconds * 1_000 + times.untilLastMs;
  rounds.add('enqueue_single', size.n / enqueued.seconds);
  rounds.add('first_to_last', rate(size.n, untilLast));
  rounds.add('first_to_last_ms', untilLast);
  rounds.phases(times);
  return `single enqueue ${integer(size.n / enqueued.seconds)}/s, first enqueue → last completion ${untilLast.toFixed(0)} ms`;
}

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
  const durability = await contender.durability();
  const described = { ...base, durability, completion: contender.completion };
  log(`${contender.impl}: ${durability}; a completion counts at: ${contender.completion}`);
  const rows: Row[] = [];
  let failed = false;
  const fail = (names: readonly string[], error: unknown): void => {
    failed = true;
    log(`${contender.impl} ${names.join('/')} FAILED: ${messageOf(error)}`);
    for (const name of names) rows.push({ case: name, ...described, ops_per_s: null, error: messageOf(error) });
  };
  try {
    const bulk = BULK_CASES.filter((name) => cases.includes(name));
    const single = SINGLE_CASES.filter((name) => cases.includes(name));
    if (bulk.length + single.length > 0) {
      const rounds = new RoundLog();
      try {
        for (let round = 1; round <= size.rounds; round++) {
          const parts: string[] = [];
          if (bulk.length > 0) parts.push(await bulkPhase(contender, size, rounds));
          if (single.length > 0) parts.push(await singlePhase(contender, size, rounds));
          log(`${contender.impl} round ${round}: ${parts.join('; ')} (load ${loadavg()[0]!.toFixed(1)})`);
        }
        const phases = { startup_ms: Number(median(rounds.startupMs).toFixed(1)), shutdown_ms: Number(median(rounds.shutdownMs).toFixed(1)) };
        for (const name of [...bulk, ...single]) {
          const extra = name === 'first_to_last' ? { until_last_ms: Math.round(median(rounds.rates.get('first_to_last_ms')!)) } : {};
          const single_ = name === 'enqueue_single' ? { in_flight: ENQUEUE_IN_FLIGHT } : {};
          rows.push({ case: name, ...described, n: size.n, ...roundFields(rounds.rates.get(name)!), ...phases, ...extra, ...single_ });
        }
      } catch (error) {
        fail([...bulk, ...single], error);
      }
    }
    if (cases.includes('latency')) {
      try {
        await contender.reset();
        const { value: samples } = await timed(`${contender.impl} latency`, () => measureLatency(contender, size.samples, CONCURRENCY));
        const p50 = percentile(samples, 50);
        const p99 = percentile(samples, 99);
        log(`${contender.impl}: latency p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);
        rows.push({ case: 'latency', ...described, ops_per_s: null, samples: samples.length, p50_ms: Number(p50.toFixed(3)), p99_ms: Number(p99.toFixed(3)) });
      } catch (error) {
        fail(['latency'], error);
      }
    }
  } finally {
    await contender.close().catch((error: unknown) => log(`${contender.impl} close failed: ${messageOf(error)}`));
  }
  return { rows, failed };
}

function ratios(rows: readonly Row[], cases: readonly string[]): Row[] {
  const molos = [...new Set(rows.map((row) => row.impl).filter((impl) => impl.startsWith('molo-')))];
  return cases.filter((name) => name !== 'latency').map((name) => ratioRow(rows, name, molos, PEERS, TARGETS[name]));
}

function report(rows: readonly Row[], ratioRows: readonly Row[]): string {
  const note = (row: Row): string => (typeof row.unavailable === 'string' ? row.unavailable : typeof row.error === 'string' ? `FAILED: ${row.error}` : '');
  const ms = (value: unknown): string => (typeof value === 'number' ? value.toFixed(0) : '');
  const throughput = formatTable(
    ['case', 'impl', 'tasks', 'tasks/s', 'spread', 'start-up ms', 'shutdown ms', 'note'],
    rows
      .filter((row) => row.case !== 'latency')
      .map((row) => [
        row.case,
        row.impl,
        typeof row.n === 'number' ? integer(row.n) : '',
        typeof row.ops_per_s === 'number' ? integer(row.ops_per_s) : '',
        spreadCell(row),
        ms(row.startup_ms),
        ms(row.shutdown_ms),
        row.case === 'first_to_last' && typeof row.until_last_ms === 'number' ? `${integer(row.until_last_ms)} ms first enqueue → last completion` : note(row),
      ]),
  );
  const settings = formatTable(
    ['impl', 'durability', 'a completion counts at'],
    [...new Map(rows.filter((row) => typeof row.durability === 'string').map((row) => [row.impl, row])).values()].map((row) => [row.impl, String(row.durability), String(row.completion)]),
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
  return [settings, '', throughput, '', 'Idle-queue latency, enqueue → handler start:', latency, '', 'Ratios (Molo ÷ peer, tasks/s, higher is better):', ...lines].join('\n');
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
    `Concurrency ${CONCURRENCY}. process = workers up → n-th recorded completion; end_to_end = bulk enqueue + start-up + processing; enqueue_single = one call each, ${ENQUEUE_IN_FLIGHT} in flight; first_to_last = first single enqueue → last recorded completion. Start-up and shutdown are timed apart. ${ROUNDS_NOTE}`,
  ]);
  return { rows: [...rows, ...ratioRows], report: [...header, '', report(rows, ratioRows)].join('\n'), failed };
}

export const tasksSuite: Suite = {
  name: 'tasks',
  description: 'Molo task queue (SQLite, Postgres; loop and thread handlers) vs BullMQ, pg-boss, graphile-worker: processing, bulk and single enqueue, first enqueue to last completion, idle latency',
  cases: CASES,
  run,
};
