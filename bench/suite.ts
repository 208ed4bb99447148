/**
 * What every benchmark suite hands back to `bench/run.ts`: result rows (written as JSON) and the
 * text to print. A row is one measurement of one case for one implementation; suites may add
 * ratio rows (`impl: 'ratio'`) and any extra fields they need.
 */
import { cpus, loadavg } from 'node:os';

export interface Row {
  readonly case: string;
  readonly impl: string;
  /** Operations per second; null for rows that carry no throughput (ratio rows, failures). */
  readonly ops_per_s: number | null;
  readonly [extra: string]: unknown;
}

export interface SuiteOptions {
  /** Smaller sizes, for a smoke test. */
  readonly quick: boolean;
  /** Only these cases (already checked against `Suite.cases`); undefined means all. */
  readonly cases: readonly string[] | undefined;
}

export interface SuiteResult {
  readonly rows: readonly Row[];
  /** Printed to stdout as is: the table and the ratio lines. */
  readonly report: string;
  /** True when a measurement failed (not when a peer is merely unavailable). */
  readonly failed: boolean;
}

export interface Suite {
  readonly name: string;
  readonly description: string;
  readonly cases: readonly string[];
  run(options: SuiteOptions): Promise<SuiteResult>;
}

/** A plain-text table: columns padded to their widest cell, numbers right-aligned. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const numeric = headers.map((_, column) => rows.length > 0 && rows.every((row) => /^[-+]?[\d.,]+[a-zA-Z%]*$|^n\/a$|^$/.test(row[column] ?? '')));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

/** A set of timed rounds summarised the honest way: the median round, with the spread of all of them. */
export interface RoundStats {
  /** Operations per second of the median round. */
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** (max − min) ÷ median, in percent: how much the rounds disagreed. */
  readonly spreadPct: number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Rates (ops/s per round) → median and spread. */
export function roundStats(rates: readonly number[]): RoundStats {
  const mid = median(rates);
  const min = Math.min(...rates);
  const max = Math.max(...rates);
  return { median: mid, min, max, spreadPct: mid > 0 ? ((max - min) / mid) * 100 : 0 };
}

/** The row fields every suite writes for its rounds: ops_per_s is the median round. */
export function roundFields(rates: readonly number[]): { ops_per_s: number; min_ops_per_s: number; max_ops_per_s: number; spread_pct: number; rounds: number } {
  const stats = roundStats(rates);
  return {
    ops_per_s: Math.round(stats.median),
    min_ops_per_s: Math.round(stats.min),
    max_ops_per_s: Math.round(stats.max),
    spread_pct: Number(stats.spreadPct.toFixed(1)),
    rounds: rates.length,
  };
}

/** "±12%" for a row with a spread, "" without (one round has none). */
export function spreadCell(row: Row): string {
  return typeof row.spread_pct === 'number' && typeof row.rounds === 'number' && row.rounds > 1 ? `${row.spread_pct.toFixed(1)}%` : '';
}

export const ROUNDS_NOTE = 'ops/s is the median round; spread is (fastest − slowest round) ÷ median over all rounds.';

/** Progress for the console (stderr: stdout carries the report). */
export const benchLog = (message: string): void => void process.stderr.write(`${message}\n`);
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Runs `fn`, timed; rejects when it takes over `timeoutMs`. */
export async function timedWithin<T>(what: string, timeoutMs: number, fn: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${timeoutMs} ms`)), timeoutMs)));
  try {
    const value = await Promise.race([fn(), timeout]);
    return { value, seconds: (performance.now() - started) / 1_000 };
  } finally {
    clearTimeout(timer);
  }
}

/** A Molo ÷ peer target on one case (reported, not asserted). */
export interface RatioTarget {
  readonly molo: string;
  readonly peer: string;
  readonly ratio: number;
}

/**
 * The ratio row of one case: `<molo without 'molo-'>_vs_<peer>` for every pair (null when either
 * side has no throughput), and with `targets`, whether all of them were met (null: no data).
 */
export function ratioRow(rows: readonly Row[], name: string, molos: readonly string[], peers: readonly string[], targets?: readonly RatioTarget[]): Row {
  const ops = (impl: string): number | null => {
    const value = rows.find((row) => row.case === name && row.impl === impl)?.ops_per_s;
    return typeof value === 'number' && value > 0 ? value : null;
  };
  const key = (molo: string, peer: string): string => `${molo.slice(5)}_vs_${peer}`;
  const row: Record<string, unknown> = { case: name, impl: 'ratio', ops_per_s: null };
  for (const molo of molos) {
    for (const peer of peers) {
      const a = ops(molo);
      const b = ops(peer);
      row[key(molo, peer)] = a !== null && b !== null ? Number((a / b).toFixed(3)) : null;
    }
  }
  if (targets !== undefined) {
    row.targets = targets.map((t) => `${key(t.molo, t.peer)} >= ${t.ratio}`);
    const met = targets.map((t) => row[key(t.molo, t.peer)]);
    row.target_met = met.some((value) => typeof value !== 'number') ? null : targets.every((t, i) => (met[i] as number) >= t.ratio);
  }
  return row as unknown as Row;
}

/** One line per ratio row: each pair as `1.23x` (`n/a` without data), then its targets' verdict. */
export function ratioLines(ratioRows: readonly Row[], width: number): string[] {
  return ratioRows.map((row) => {
    const parts = Object.keys(row)
      .filter((key) => key.includes('_vs_'))
      .map((key) => `${key} ${typeof row[key] === 'number' ? `${(row[key] as number).toFixed(2)}x` : 'n/a'}`);
    const target = Array.isArray(row.targets) ? ` [targets ${(row.targets as string[]).join(', ')}: ${row.target_met === true ? 'met' : row.target_met === false ? 'MISSED' : 'no data'}]` : '';
    return `${row.case.padEnd(width)} ${parts.length > 0 ? parts.join('  ') : '(no pairs with data)'}${target}`;
  });
}

/** The lines above a suite's tables: machine, what was run, the load average, and a quick run's caveat. */
export function suiteHeader(suite: string, quick: boolean, servers: string, loadBefore: number, notes: readonly string[]): string[] {
  const lines = [
    `${suite} suite, ${quick ? 'quick' : 'full'} run: node ${process.version}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores); ${servers} on the same machine`,
    ...notes,
    `1-minute load average: ${loadBefore.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end` + (loadBefore > cpus().length / 2 ? ' (other work was running: expect noise)' : ''),
  ];
  if (quick) lines.push('Quick run: tiny sizes; the numbers show the harness works, not how fast anything is.');
  return lines;
}
