/**
 * The `actors` suite: Molo against xstate v5, a raw microtask queue and Erlang/OTP, case by case.
 * Every (case, implementation) pair runs in a fresh process: JavaScript ones in
 * `node --expose-gc --import tsx worker.ts`, Erlang ones in single-scheduler VMs: ERLANG_VMS of
 * them per case, the median VM counted (gen_server:call is bimodal from one VM to the next).
 */
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Row, Suite, SuiteOptions, SuiteResult } from '../suite.js';
import { CASES, IMPLS, applies, type CaseName, type Impl } from './cases.js';
import { startErlang } from './erlang.js';
import { runProcess } from './process.js';
import { metricOf, ratioLines, ratioRows, resultTable } from './report.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = join(HERE, '..', '..');
const WORKER = join(HERE, 'worker.ts');
/** xstate's 1 M idle root actors need about 3.2 GB. */
const WORKER_HEAP_MB = 16_384;
/** Fresh VMs per Erlang case; the row is the median VM's, by its reported metric. */
export const ERLANG_VMS = 3;

const log = (message: string): void => void process.stderr.write(`${message}\n`);

function summary(row: Row): string {
  const parts = [`${Math.round(row.ops_per_s ?? 0).toLocaleString('en-US')} ops/s`];
  for (const field of ['mean_us', 'p99_us', 'ms', 'bytes_per_actor']) {
    if (typeof row[field] === 'number') parts.push(`${field}=${row[field]}`);
  }
  return parts.join(' ');
}

async function run(options: SuiteOptions): Promise<SuiteResult> {
  const mode = options.quick ? 'quick' : 'full';
  const selected = CASES.filter((name) => options.cases === undefined || options.cases.includes(name));
  const loadBefore = loadavg()[0]!;
  const erlang = await startErlang();
  const erlangNote = 'unavailable' in erlang ? `Erlang rows unavailable: ${erlang.unavailable}` : `Erlang: ${erlang.version}, erl +S 1:1`;
  log(`actors suite (${mode}): ${selected.join(', ')}. ${erlangNote}`);

  const rows: Row[] = [];
  let failed = false;
  try {
    for (const name of selected) {
      for (const impl of IMPLS) {
        if (!applies(impl, name)) continue;
        if (impl === 'erlang' && 'unavailable' in erlang) {
          rows.push({ case: name, impl, ops_per_s: null, mode, unavailable: erlang.unavailable });
          continue;
        }
        log(`  ${name}/${impl} ...`);
        try {
          const row = await measure(name, impl, options.quick, erlang);
          rows.push({ ...row, mode });
          log(`  ${name}/${impl}: ${summary(row)}`);
        } catch (error) {
          failed = true;
          const message = error instanceof Error ? error.message : String(error);
          rows.push({ case: name, impl, ops_per_s: null, mode, error: message });
          log(`  ${name}/${impl} FAILED: ${message}`);
        }
      }
    }
  } finally {
    if (!('unavailable' in erlang)) await erlang.dispose();
  }

  const ratios = ratioRows(rows, selected);
  const header = [
    `actors suite, ${mode} run: node ${process.version}, ${erlangNote}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores)`,
    'Molo, xstate and raw run on one thread; each case × impl runs in its own process after a warm-up;',
    `throughput is the median of the timed rounds (spread = (max − min) ÷ median); Erlang rows are the median of ${ERLANG_VMS} fresh VMs.`,
    'Every implementation sends the same payload ({ type, value } objects; {msg, I} / {call, I} tuples in Erlang).',
    `1-minute load average: ${loadBefore.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end` +
      (loadBefore > cpus().length / 2 ? ' (other work was running: expect noisy tails)' : ''),
  ];
  if (options.quick) header.push('Quick run: small sizes, JIT barely warm; numbers show the harness works, not how fast anything is.');
  const report = [...header, '', resultTable(rows), '', ratioLines(ratios)];
  if ('unavailable' in erlang) report.push('', `${erlangNote}: ratios against Erlang are n/a.`);
  return { rows: [...rows, ...ratios], report: report.join('\n'), failed };
}

/** Runs `ERLANG_VMS` fresh VMs and keeps the median one by the case's metric, listing every VM's value. */
async function medianVm(run: () => Promise<Row>, name: CaseName): Promise<Row> {
  const metric = metricOf(name);
  const rows: Row[] = [];
  for (let vm = 0; vm < ERLANG_VMS; vm++) rows.push(await run());
  const value = (row: Row): number => (typeof row[metric] === 'number' ? (row[metric] as number) : Number.NaN);
  const sorted = [...rows].sort((a, b) => value(a) - value(b));
  const chosen = sorted[(sorted.length - 1) >> 1]!;
  const values = rows.map(value);
  const mid = value(chosen);
  return { ...chosen, vms: rows.length, vm_values: values, vm_spread_pct: Number((((Math.max(...values) - Math.min(...values)) / mid) * 100).toFixed(1)) };
}

function measure(name: CaseName, impl: Impl, quick: boolean, erlang: Awaited<ReturnType<typeof startErlang>>): Promise<Row> {
  if (impl === 'erlang') {
    if ('unavailable' in erlang) throw new Error(erlang.unavailable);
    return medianVm(() => erlang.run(name, quick), name);
  }
  const args = [
    '--expose-gc',
    `--max-old-space-size=${WORKER_HEAP_MB}`,
    '--import',
    'tsx',
    WORKER,
    name,
    impl,
    quick ? 'quick' : 'full',
  ];
  return runProcess(process.execPath, args, `${impl} ${name}`, REPO_ROOT);
}

export const actorsSuite: Suite = {
  name: 'actors',
  description: 'Molo vs xstate v5 (callback actor, machine with assign), a raw microtask queue and Erlang/OTP: send, send_10k, call, spawn, idle, restart, one_for_all',
  cases: CASES,
  run,
};
