/**
 * The `streams` suite: Molo's durable streams on SQLite and on Postgres against NATS JetStream
 * (file storage, durable pull consumer, explicit acks, async publish) and Redis Streams (XADD,
 * XREADGROUP, XACK in batches), all from this process, on 1 KiB messages: publish, consume + ack,
 * and end to end (publisher and consumer at once). Each system runs its phases in turn, one round
 * each (100,000 messages take long enough that one round is a stable figure; the load average is
 * printed to say how noisy the machine was). Also reported: bytes held per million retained
 * messages, on disk for the stores and JetStream, in memory for Redis.
 */
import { loadavg } from 'node:os';
import { withBenchPostgres } from '../data/server.js';
import { benchLog, formatTable, suiteHeader, messageOf, ratioLines, ratioRow, timedWithin, type RatioTarget, type Row, type Suite, type SuiteOptions, type SuiteResult } from '../suite.js';
import type { StreamContender } from './contender.js';
import { jetstreamContender } from './jetstream.js';
import { moloContender } from './molo.js';
import { redisStreamsContender } from './redis-streams.js';

const CASES = ['publish', 'consume_ack', 'end_to_end'] as const;
const SIZES = { full: 100_000, quick: 2_000 } as const;
const PHASE_TIMEOUT_MS = 600_000;

/** Molo ÷ peer targets on end to end (reported, not asserted). */
const TARGETS: readonly RatioTarget[] = [
  { molo: 'molo-sqlite', peer: 'jetstream', ratio: 2 },
  { molo: 'molo-sqlite', peer: 'redis', ratio: 0.5 },
  { molo: 'molo-postgres', peer: 'jetstream', ratio: 1 },
];

const log = benchLog;
const timed = <T>(what: string, fn: () => Promise<T>): Promise<{ value: T; seconds: number }> => timedWithin(what, PHASE_TIMEOUT_MS, fn);

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
  return cases.map((name) => ratioRow(rows, name, ['molo-sqlite', 'molo-postgres'], ['jetstream', 'redis'], name === 'end_to_end' ? TARGETS : undefined));
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
  const lines = ratioLines(ratioRows, 12);
  return [table, '', retained, '', 'Ratios (Molo ÷ peer, msgs/s, higher is better):', ...lines].join('\n');
}

async function run(options: SuiteOptions): Promise<SuiteResult> {
  const mode = options.quick ? 'quick' : 'full';
  const n = SIZES[mode];
  const cases = CASES.filter((name) => options.cases === undefined || options.cases.includes(name));
  const loadBefore = loadavg()[0]!;
  log(`streams suite (${mode}): ${cases.join(', ')}; ${n.toLocaleString('en-US')} messages of 1 KiB`);
  const rows: Row[] = [];
  let failed = false;
  await withBenchPostgres('bench-streams', async (system, pg) => {
    for (const contender of [moloContender(system, 'sqlite', undefined), moloContender(system, 'postgres', pg), jetstreamContender(), redisStreamsContender()]) {
      const outcome = await measure(contender, cases, n, mode);
      rows.push(...outcome.rows);
      failed ||= outcome.failed;
    }
  });
  const ratioRows = ratios(rows, cases);
  const header = suiteHeader('streams', options.quick, 'Postgres, nats-server -js and Redis', loadBefore, [
    'One round per system and phase, systems in turn; msgs/s = messages ÷ wall time of the phase.',
  ]);
  return { rows: [...rows, ...ratioRows], report: [...header, '', report(rows, ratioRows)].join('\n'), failed };
}

export const streamsSuite: Suite = {
  name: 'streams',
  description: 'Molo durable streams (SQLite, Postgres) vs NATS JetStream and Redis Streams: publish, consume + ack, end to end',
  cases: CASES,
  run,
};
