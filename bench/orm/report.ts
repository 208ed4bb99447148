/**
 * The orm suite's table and ratios: Molo's ORM ÷ drizzle (targets: ≥ 1.0 on Postgres, ≥ 0.5 on
 * SQLite, where drizzle calls better-sqlite3 synchronously on the main thread and Molo goes through
 * its worker), and the ORM's overhead over Molo's raw client (target < 15%): the median of paired
 * rounds (paired.ts) where they ran, the quotient of the two separate medians (raw ÷ ORM − 1) beside it.
 */
import { formatTable, spreadCell, type Row } from '../suite.js';
import type { PairedOverhead } from './paired.js';

export const OVERHEAD_TARGET = 0.15;
export const vsDrizzleTarget = (name: string): number => (name.startsWith('pg_') ? 1 : 0.5);

const measured = (row: Row | undefined): row is Row & { ops_per_s: number } => row !== undefined && typeof row.ops_per_s === 'number' && row.ops_per_s > 0;
const round3 = (value: number): number => Number(value.toFixed(3));

export function withOrmRatios(rows: readonly Row[], cases: readonly string[], paired: ReadonlyMap<string, PairedOverhead> = new Map()): { rows: Row[]; ratios: Row[] } {
  const out: Row[] = [];
  const ratios: Row[] = [];
  for (const name of cases) {
    const caseRows = rows.filter((row) => row.case === name);
    if (caseRows.length === 0) continue;
    const molo = caseRows.find((row) => row.impl === 'molo');
    const raw = caseRows.find((row) => row.impl === 'molo-raw');
    const drizzleDefault = caseRows.find((row) => row.impl === 'drizzle');
    const drizzlePrepared = caseRows.find((row) => row.impl === 'drizzle-prepared');
    // The target is against prepared drizzle where it ran: the fastest way a drizzle user can call it.
    const drizzle = measured(drizzlePrepared) ? drizzlePrepared : drizzleDefault;
    const vsDrizzle = measured(molo) && measured(drizzle) ? round3(molo.ops_per_s / drizzle.ops_per_s) : null;
    const vsDefault = measured(molo) && measured(drizzleDefault) ? round3(molo.ops_per_s / drizzleDefault.ops_per_s) : null;
    const separate = measured(molo) && measured(raw) ? round3(raw.ops_per_s / molo.ops_per_s - 1) : null;
    const pairs = paired.get(name);
    // Paired rounds when they ran: two separate medians of a few rounds each can flip with noise.
    const overhead = pairs === undefined ? separate : round3(pairs.wall);
    const target = vsDrizzleTarget(name);
    ratios.push({
      case: name,
      impl: 'ratio',
      ops_per_s: null,
      vs_drizzle: vsDrizzle,
      vs_drizzle_peer: drizzle?.impl ?? null,
      vs_drizzle_default: vsDefault,
      target_vs_drizzle: `>= ${target}`,
      vs_drizzle_met: vsDrizzle === null ? null : vsDrizzle >= target,
      orm_overhead: overhead,
      orm_overhead_method: pairs === undefined ? 'separate medians' : 'paired',
      orm_overhead_separate: separate,
      ...(pairs === undefined
        ? {}
        : { orm_overhead_iqr: [round3(pairs.wallLow), round3(pairs.wallHigh)], orm_overhead_cpu: round3(pairs.cpu), orm_overhead_pairs: pairs.pairs, orm_overhead_pair_n: pairs.n }),
      target_overhead: `< ${OVERHEAD_TARGET}`,
      overhead_met: overhead === null ? null : overhead < OVERHEAD_TARGET,
    });
    for (const row of caseRows) out.push(row.impl === 'molo' ? { ...row, vs_drizzle: vsDrizzle, orm_overhead: overhead } : row);
  }
  return { rows: out, ratios };
}

const integer = (value: number): string => Math.round(value).toLocaleString('en-US');
const verdict = (met: unknown): string => (met === true ? 'met' : met === false ? 'MISSED' : 'no data');

export function ormReport(rows: readonly Row[], ratios: readonly Row[]): string {
  const body = rows.map((row) => {
    if (!measured(row)) {
      const why = typeof row.unavailable === 'string' ? row.unavailable : `FAILED: ${String(row.error)}`;
      return [row.case, row.impl, '', '', '', '', '', why.split('\n')[0]!];
    }
    return [
      row.case,
      row.impl,
      typeof row.n === 'number' ? `${integer(row.n)} ${String(row.unit)}` : '',
      integer(row.ops_per_s),
      spreadCell(row),
      typeof row.median_ms === 'number' ? row.median_ms.toFixed(1) : '',
      typeof row.cpu_us_per_op === 'number' ? row.cpu_us_per_op.toFixed(2) : '',
      '',
    ];
  });
  const table = formatTable(['case', 'impl', 'size', 'ops/s (median)', 'spread', 'median ms', 'cpu µs/op', 'note'], body);
  const lines = ratios.map((r) => {
    const vs = typeof r.vs_drizzle === 'number' ? `${r.vs_drizzle.toFixed(2)}x` : 'n/a';
    const pct = (x: unknown): string => (typeof x === 'number' ? `${(x * 100).toFixed(1)}%` : 'n/a');
    const oh = pct(r.orm_overhead);
    const how =
      r.orm_overhead_method === 'paired' && Array.isArray(r.orm_overhead_iqr)
        ? ` paired (IQR ${pct(r.orm_overhead_iqr[0])}–${pct(r.orm_overhead_iqr[1])}, CPU ${pct(r.orm_overhead_cpu)}; separate medians ${pct(r.orm_overhead_separate)})`
        : '';
    const peer = r.vs_drizzle_peer === 'drizzle-prepared' ? 'drizzle-prepared' : 'drizzle';
    const also = peer === 'drizzle-prepared' && typeof r.vs_drizzle_default === 'number' ? ` (÷drizzle default ${r.vs_drizzle_default.toFixed(2)}x)` : '';
    return `${r.case.padEnd(20)} molo÷${peer} ${vs.padStart(6)}${also} [target ${String(r.target_vs_drizzle)}: ${verdict(r.vs_drizzle_met)}]  ORM overhead over raw ${oh.padStart(6)} [target ${String(r.target_overhead)}: ${verdict(r.overhead_met)}]${how}`;
  });
  return [table, '', 'Ratios (ops/s; molo÷drizzle higher is better; overhead = raw÷ORM − 1, lower is better):', ...lines].join('\n');
}
