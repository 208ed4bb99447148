/**
 * The `data` suite: Molo's Postgres client and pool against postgres.js and node-postgres, and
 * Molo's SQLite (through its worker) against better-sqlite3 on the main thread. Everything runs in
 * this one process against the same server and disk, side by side (see rounds.ts for how).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from '../../src/actors/index.js';
import { ROUNDS_NOTE, type Row, type Suite, type SuiteOptions, type SuiteResult } from '../suite.js';
import { loadConnectPostgres, loadCreatePostgresPool, loadOpenSqlite } from './molo.js';
import { PG_CASES, pgCases, type PgSizes } from './pg-cases.js';
import { ratioLines, resultTable, withRatios } from './report.js';
import { measureCase, type CaseSpec } from './rounds.js';
import { createBenchServer } from './server.js';
import { SQLITE_CASES, sqliteCases, type SqliteSizes } from './sqlite-cases.js';

const CASES: readonly string[] = [...PG_CASES, ...SQLITE_CASES];

interface Sizes {
  readonly pg: PgSizes;
  readonly fetchRows: number;
  readonly sqlite: SqliteSizes;
}

const SIZES: Readonly<Record<'full' | 'quick', Sizes>> = {
  full: { pg: { statements: 20_000, warmup: 5_000, rounds: 5 }, fetchRows: 100_000, sqlite: { n: 100_000, awaited: 10_000, warmup: 20_000, rounds: 5 } },
  quick: { pg: { statements: 300, warmup: 100, rounds: 1 }, fetchRows: 2_000, sqlite: { n: 2_000, awaited: 300, warmup: 500, rounds: 1 } },
};

const log = (message: string): void => void process.stderr.write(`${message}\n`);
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Rows for cases that cannot run at all (no server): every implementation unavailable, not failed. */
function unavailableRows(specNames: readonly string[], impls: readonly string[], why: string, mode: string): Row[] {
  return specNames.flatMap((name) => impls.map((impl) => ({ case: name, impl, ops_per_s: null, mode, unavailable: why })));
}

async function runSpecs(specs: readonly CaseSpec[], selected: readonly string[], mode: string, rows: Row[]): Promise<boolean> {
  let failed = false;
  for (const spec of specs) {
    if (!selected.includes(spec.name)) continue;
    log(`${spec.name}: ${spec.n.toLocaleString('en-US')} ${spec.unit}, ${spec.rounds} round(s) after a warm-up of ${spec.warmupN.toLocaleString('en-US')}`);
    const outcome = await measureCase(spec, mode);
    rows.push(...outcome.rows);
    failed ||= outcome.failed;
  }
  return failed;
}

async function runPostgres(system: ActorSystem, sizes: Sizes, selected: readonly string[], mode: string, rows: Row[]): Promise<boolean> {
  const names = PG_CASES.filter((name) => selected.includes(name));
  if (names.length === 0) return false;
  const [connect, pool] = await Promise.all([loadConnectPostgres(), loadCreatePostgresPool()]);
  let server;
  try {
    server = await createBenchServer(sizes.fetchRows);
  } catch (error) {
    const why = `postgres unavailable: ${messageOf(error)}`;
    log(why);
    rows.push(...unavailableRows(names, ['molo', 'postgres.js', 'pg', 'pg-pipeline'], why, mode));
    return false;
  }
  log(`postgres: database ${server.database} on ${server.host}:${server.port}`);
  try {
    return await runSpecs(pgCases(server, sizes.pg, { system, connect, pool }), names, mode, rows);
  } finally {
    await server.drop().catch((error: unknown) => log(`dropping ${server.database} failed: ${messageOf(error)}`));
  }
}

async function runSqlite(system: ActorSystem, sizes: Sizes, selected: readonly string[], mode: string, rows: Row[]): Promise<boolean> {
  const names = SQLITE_CASES.filter((name) => selected.includes(name));
  if (names.length === 0) return false;
  const open = await loadOpenSqlite();
  const dir = await mkdtemp(join(tmpdir(), 'molo-bench-data-'));
  log(`sqlite: files in ${dir}`);
  try {
    return await runSpecs(sqliteCases(dir, sizes.sqlite, { system, open }), names, mode, rows);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function run(options: SuiteOptions): Promise<SuiteResult> {
  const mode = options.quick ? 'quick' : 'full';
  const sizes = SIZES[mode];
  const selected = CASES.filter((name) => options.cases === undefined || options.cases.includes(name));
  const loadBefore = loadavg()[0]!;
  log(`data suite (${mode}): ${selected.join(', ')}`);

  const rows: Row[] = [];
  const system = new ActorSystem();
  let failed = false;
  try {
    failed = (await runPostgres(system, sizes, selected, mode, rows)) || failed;
    failed = (await runSqlite(system, sizes, selected, mode, rows)) || failed;
  } finally {
    system.shutdown();
  }

  const { rows: table, ratios } = withRatios(rows, selected);
  const header = [
    `data suite, ${mode} run: node ${process.version}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores); Postgres on the same machine`,
    `All implementations run in this process, interleaved round by round after a warm-up; ${ROUNDS_NOTE}`,
    'cpu µs/op is this process\'s CPU time (all threads) per operation, median round: the client\'s cost without the server\'s.',
    `1-minute load average: ${loadBefore.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end` +
      (loadBefore > cpus().length / 2 ? ' (other work was running: expect noise)' : ''),
  ];
  if (options.quick) header.push('Quick run: tiny sizes; the numbers show the harness works, not how fast anything is.');
  const missing = table.filter((row) => row.impl === 'molo' && typeof row.unavailable === 'string');
  const report = [...header, '', resultTable(table), '', ratioLines(ratios)];
  if (missing.length > 0) report.push('', ...missing.map((row) => `${row.case}: ${String(row.unavailable)}`));
  return { rows: [...table, ...ratios], report: report.join('\n'), failed };
}

export const dataSuite: Suite = {
  name: 'data',
  description: 'Molo Postgres/SQLite vs postgres.js, pg (+pipeline), better-sqlite3: sequential, pooled, pipelined, fetch, insert, select',
  cases: CASES,
  run,
};
