/**
 * The `streams` suite: Molo's durable streams on SQLite and on Postgres against NATS JetStream
 * (file storage, durable pull consumer, explicit acks, async publish) and Redis Streams (XADD,
 * XREADGROUP, XACK in batches), all from this process, on 1 KiB messages: publish, consume + ack,
 * and end to end (publisher and consumer at once). Each system runs its phases in turn, one round
 * each (100,000 messages take long enough that one round is a stable figure; the load average is
 * printed to say how noisy the machine was). Also reported: bytes held per million retained
 * messages, on disk for the stores and JetStream, in memory for Redis.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { ActorSystem } from '../../src/actors/index.js';
import { createBenchServer, type BenchServer } from '../data/server.js';
import { formatTable, type Row, type Suite, type SuiteOptions, type SuiteResult } from '../suite.js';
import type { StreamContender } from './contender.js';
import { jetstreamContender } from './jetstream.js';
import { moloContender } from './molo.js';
import { redisStreamsContender } from './redis-streams.js';

const CASES = ['publish', 'consume_ack', 'end_to_end'] as const;
const SIZES = { full: 100_000, quick: 2_000 } as const;
const PHASE_TIMEOUT_MS = 600_000;

/** Molo ÷ peer targets on end to end (reported, not asserted). */
const TARGETS: readonly { readonly molo: string; readonly peer: string; readonly ratio: number }[] = [
  { molo: 'molo-sqlite', peer: 'jetstream', ratio: 2 },
  { molo: 'molo-sqlite', peer: 'redis', ratio: 0.5 },
  { molo: 'molo-postgres', peer: 'jetstream', ratio: 1 },
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

/** Runs one system's phases; answers its rows. */
async function measure(contender: StreamContender, cases: readonly string[], n: number, mode: string): Promise<{ rows: Row[]; failed: boolean }> {
  const payload = Buffer.alloc(1_024, 0x61);
  const base = { impl: contender.impl, n, unit: 'messages', mode };
  try {
    await contender.open();
  } catch (error) {
    const why = `${contender.impl} unavailable: ${messageOf(error)}`;
    log(why);
    return { rows: [...cases.map((name) => ({ case: name, ...base, ops_per_s: null, unavailable: why })), { case: 'retained', ...base, ops_per_s: null, unavailable: why }], failed: false };
  }
  const rows: Row[] = [];
  let failed = false;
  const phase = async (name: string, fn: () => Promise<number | void>): Promise<void> => {
    if (!cases.includes(name)) return;
    log(`${contender.impl}: ${name}, ${n.toLocaleString('en-US')} messages`);
    try {
      const { value, seconds } = await timed(`${contender.impl} ${name}`, fn);
      if (typeof value === 'number' && value !== n) throw new Error(`saw ${value} distinct messages, expected ${n}`);
      rows.push({ case: name, ...base, ops_per_s: Math.round(n / seconds), seconds: Number(seconds.toFixed(3)) });
      log(`${contender.impl}: ${name} ${Math.round(n / seconds).toLocaleString('en-US')} msgs/s (load ${loadavg()[0]!.toFixed(1)})`);
    } catch (error) {
      failed = true;
      log(`${contender.impl} ${name} FAILED: ${messageOf(error)}`);
      rows.push({ case: name, ...base, ops_per_s: null, error: messageOf(error) });
    }
  };
  try {
    await contender.reset();
    await phase('publish', () => contender.publish(n, payload));
    if (cases.includes('publish')) {
      const retained = await contender.retainedBytes().catch(() => null);
      log(`${contender.impl}: retained ${retained === null ? 'n/a' : `${Math.round(retained.bytes / n)} bytes/msg`}`);
      rows.push({ case: 'retained', ...base, ops_per_s: null, bytes_per_million_msgs: retained === null ? null : Math.round((retained.bytes / n) * 1_000_000), where: retained?.where ?? 'n/a' });
      await phase('consume_ack', () => contender.consume(n));
    }
    if (cases.includes('end_to_end')) {
      await contender.reset();
      await phase('end_to_end', () => contender.endToEnd(n, payload));
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
  return cases.map((name) => {
    const row: Record<string, unknown> = { case: name, impl: 'ratio', ops_per_s: null };
    for (const molo of ['molo-sqlite', 'molo-postgres']) {
      for (const peer of ['jetstream', 'redis']) {
        const a = ops(name, molo);
        const b = ops(name, peer);
        row[`${molo.slice(5)}_vs_${peer}`] = a !== null && b !== null ? Number((a / b).toFixed(3)) : null;
      }
    }
    if (name === 'end_to_end') {
      row.targets = TARGETS.map((t) => `${t.molo.slice(5)}_vs_${t.peer} >= ${t.ratio}`);
      const met = TARGETS.map((t) => row[`${t.molo.slice(5)}_vs_${t.peer}`]);
      row.target_met = met.some((value) => value === null) ? null : TARGETS.every((t, i) => (met[i] as number) >= t.ratio);
    }
    return row as unknown as Row;
  });
}

function report(rows: readonly Row[], ratioRows: readonly Row[]): string {
  const integer = (value: number): string => Math.round(value).toLocaleString('en-US');
  const table = formatTable(
    ['case', 'impl', 'size', 'msgs/s', 'seconds', 'note'],
    rows
      .filter((row) => row.case !== 'retained')
      .map((row) => [
        row.case,
        row.impl,
        `${integer(row.n as number)} msgs`,
        typeof row.ops_per_s === 'number' ? integer(row.ops_per_s) : '',
        typeof row.seconds === 'number' ? row.seconds.toFixed(2) : '',
        typeof row.unavailable === 'string' ? row.unavailable : typeof row.error === 'string' ? `FAILED: ${row.error}` : '',
      ]),
  );
  const retained = formatTable(
    ['impl', 'bytes per 1M retained msgs', 'where'],
    rows
      .filter((row) => row.case === 'retained')
      .map((row) => [row.impl, typeof row.bytes_per_million_msgs === 'number' ? `${(row.bytes_per_million_msgs / 1_048_576).toFixed(0)} MiB` : 'n/a', String(row.where ?? row.unavailable ?? '')]),
  );
  const lines = ratioRows.map((row) => {
    const parts = Object.keys(row)
      .filter((key) => key.includes('_vs_'))
      .map((key) => `${key} ${typeof row[key] === 'number' ? `${(row[key] as number).toFixed(2)}x` : 'n/a'}`);
    const target = Array.isArray(row.targets) ? ` [targets ${(row.targets as string[]).join(', ')}: ${row.target_met === true ? 'met' : row.target_met === false ? 'MISSED' : 'no data'}]` : '';
    return `${row.case.padEnd(12)} ${parts.join('  ')}${target}`;
  });
  return [table, '', retained, '', 'Ratios (Molo ÷ peer, msgs/s, higher is better):', ...lines].join('\n');
}

async function run(options: SuiteOptions): Promise<SuiteResult> {
  const mode = options.quick ? 'quick' : 'full';
  const n = SIZES[mode];
  const cases = CASES.filter((name) => options.cases === undefined || options.cases.includes(name));
  const loadBefore = loadavg()[0]!;
  log(`streams suite (${mode}): ${cases.join(', ')}; ${n.toLocaleString('en-US')} messages of 1 KiB`);
  const system = new ActorSystem({ node: 'bench-streams' });
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
    for (const contender of [moloContender(system, 'sqlite', undefined), moloContender(system, 'postgres', pg), jetstreamContender(), redisStreamsContender()]) {
      const outcome = await measure(contender, cases, n, mode);
      rows.push(...outcome.rows);
      failed ||= outcome.failed;
    }
  } finally {
    system.shutdown();
    await pg?.drop().catch((error: unknown) => log(`dropping ${pg!.database} failed: ${messageOf(error)}`));
  }
  const ratioRows = ratios(rows, cases);
  const header = [
    `streams suite, ${mode} run: node ${process.version}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores); Postgres, nats-server -js and Redis on the same machine`,
    'One round per system and phase, systems in turn; msgs/s = messages ÷ wall time of the phase.',
    `1-minute load average: ${loadBefore.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end` + (loadBefore > cpus().length / 2 ? ' (other work was running: expect noise)' : ''),
  ];
  if (options.quick) header.push('Quick run: tiny sizes; the numbers show the harness works, not how fast anything is.');
  return { rows: [...rows, ...ratioRows], report: [...header, '', report(rows, ratioRows)].join('\n'), failed };
}

export const streamsSuite: Suite = {
  name: 'streams',
  description: 'Molo durable streams (SQLite, Postgres) vs NATS JetStream and Redis Streams: publish, consume + ack, end to end',
  cases: CASES,
  run,
};
