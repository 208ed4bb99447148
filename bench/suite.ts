/**
 * What every benchmark suite hands back to `bench/run.ts`: result rows (written as JSON) and the
 * text to print. A row is one measurement of one case for one implementation; suites may add
 * ratio rows (`impl: 'ratio'`) and any extra fields they need.
 */
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
