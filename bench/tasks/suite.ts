/**
 * The `tasks` suite: Molo's task queue (SQLite, Postgres; `loop` and `thread` handlers) against
 * BullMQ (Redis), pg-boss and graphile-worker (the same Postgres), all from this process, on no-op
 * tasks: end to end (enqueue n in bulk, then process them at concurrency 10), enqueue throughput
 * (the first half of each end-to-end round, timed on its own), and idle-queue latency from one
 * enqueue to its handler's start (p50, p99). Rounds per system in turn; the median round and the
 * spread of all of them are reported, with the load average.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { ActorSystem } from '../../src/actors/index.js';
import { createBenchServer, type BenchServer } from '../data/server.js';
import { formatTable, roundFields, ROUNDS_NOTE, spreadCell, type Row, type Suite, type SuiteOptions, type SuiteResult } from '../suite.js';
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
const TARGETS: readonly { readonly molo: string; readonly peer: string; readonly ratio: number }[] = [
  { molo: 'molo-postgres-loop', peer: 'bullmq', ratio: 1 },
  { molo: 'molo-sqlite-loop', peer: 'bullmq', ratio: 2 },
];

const log = (message: string): void => void process.stderr.write(`${message}\n`);
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

async function timed<T>(what: string, fn: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${PHASE_TIMEOUT_MS} ms`)), PHASE_TIMEOUT_MS)));
  try {
    const value = await Promise.race([fn(), timeout]);
    return { value, seconds: (performance.now() - started) / 1_000 };
  } finally {
    clearTimeout(timer);
  }
}

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
  const ops = (name: string, impl: string): number | null => {
    const value = rows.find((row) => row.case === name && row.impl === impl)?.ops_per_s;
    return typeof value === 'number' && value > 0 ? value : null;
  };
  const molos = [...new Set(rows.map((row) => row.impl).filter((impl) => impl.startsWith('molo-')))];
  return cases
    .filter((name) => name !== 'latency')
    .map((name) => {
      const row: Record<string, unknown> = { case: name, impl: 'ratio', ops_per_s: null };
      for (const molo of molos) {
        for (const peer of PEERS) {
          const a = ops(name, molo);
          const b = ops(name, peer);
          row[`${molo.slice(5)}_vs_${peer}`] = a !== null && b !== null ? Number((a / b).toFixed(3)) : null;
        }
      }
      if (name === 'end_to_end') {
        row.targets = TARGETS.map((t) => `${t.molo.slice(5)}_vs_${t.peer} >= ${t.ratio}`);
        const met = TARGETS.map((t) => row[`${t.molo.slice(5)}_vs_${t.peer}`]);
        row.target_met = met.some((value) => value === null || value === undefined) ? null : TARGETS.every((t, i) => (met[i] as number) >= t.ratio);
      }
      return row as unknown as Row;
    });
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
  const lines = ratioRows.map((row) => {
    const parts = Object.keys(row)
      .filter((key) => key.includes('_vs_'))
      .map((key) => `${key} ${typeof row[key] === 'number' ? `${(row[key] as number).toFixed(2)}x` : 'n/a'}`);
    const target = Array.isArray(row.targets) ? ` [targets ${(row.targets as string[]).join(', ')}: ${row.target_met === true ? 'met' : row.target_met === false ? 'MISSED' : 'no data'}]` : '';
    return `${row.case.padEnd(10)} ${parts.length > 0 ? parts.join('  ') : '(no Molo rows)'}${target}`;
  });
  return [throughput, '', 'Idle-queue latency, enqueue → handler start:', latency, '', 'Ratios (Molo ÷ peer, tasks/s, higher is better):', ...lines].join('\n');
}

async function run(options: SuiteOptions): Promise<SuiteResult> {
  const mode = options.quick ? 'quick' : 'full';
  const size = SIZES[mode];
  const cases = CASES.filter((name) => options.cases === undefined || options.cases.includes(name));
  const loadBefore = loadavg()[0]!;
  log(`tasks suite (${mode}): ${cases.join(', ')}; ${size.n.toLocaleString('en-US')} no-op tasks × ${size.rounds} rounds, ${size.samples} latency samples`);
  const system = new ActorSystem({ node: 'bench-tasks' });
  let pg: BenchServer | undefined;
  const rows: Row[] = [];
  let failed = false;
  try {
    try {
      pg = await createBenchServer(0);
      log(`postgres: database ${pg.database} on ${pg.host}:${pg.port}`);
    } catch (error) {
      log(`postgres unavailable: ${messageOf(error)}`);
    }
    const contenders = [...moloContenders(system, pg), bullmqContender(), pgBossContender(pg), graphileWorkerContender(pg)];
    for (const contender of contenders) {
      const outcome = await measure(contender, cases, size, mode);
      rows.push(...outcome.rows);
      failed ||= outcome.failed;
    }
  } finally {
    system.shutdown();
    await pg?.drop().catch((error: unknown) => log(`dropping ${pg!.database} failed: ${messageOf(error)}`));
  }
  const ratioRows = ratios(rows, cases);
  const header = [
    `tasks suite, ${mode} run: node ${process.version}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores); Postgres and Redis on the same machine`,
    `End to end = enqueue n in bulk, then process them at concurrency ${CONCURRENCY} (workers started inside the timing); enqueue = the first part alone. ${ROUNDS_NOTE}`,
    `1-minute load average: ${loadBefore.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end` + (loadBefore > cpus().length / 2 ? ' (other work was running: expect noise)' : ''),
  ];
  if (options.quick) header.push('Quick run: tiny sizes; the numbers show the harness works, not how fast anything is.');
  return { rows: [...rows, ...ratioRows], report: [...header, '', report(rows, ratioRows)].join('\n'), failed };
}

export const tasksSuite: Suite = {
  name: 'tasks',
  description: 'Molo task queue (SQLite, Postgres; loop and thread handlers) vs BullMQ, pg-boss, graphile-worker: end to end, enqueue, idle latency',
  cases: CASES,
  run,
};
