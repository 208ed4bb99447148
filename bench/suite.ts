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
