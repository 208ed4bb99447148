/**
 * The data suite's table and ratios. Every ratio is Molo's ops/s ÷ a peer's (higher is better);
 * the target is on the ratio to the best peer of the case.
 */
import { formatTable, spreadCell, type Row } from '../suite.js';

/** Molo ÷ best peer targets: ≥ 1 where Molo should lead, 0.95 sequential (one round trip dominates), 0.5 for SQLite through a worker. */
export const TARGETS: Readonly<Record<string, number>> = {
  pg_sequential: 0.95,
  pg_pool: 1,
  pg_one_conn: 1,
  pg_fetch: 1,
  sqlite_insert: 0.5,
  sqlite_select: 0.5,
  sqlite_insert_awaited: 0.8,
  sqlite_select_awaited: 0.8,
  sqlite_bulk_insert: 0.8,
};

const measured = (row: Row): row is Row & { ops_per_s: number } => typeof row.ops_per_s === 'number' && row.ops_per_s > 0;
const ratio = (molo: number, peer: number): number => Number((molo / peer).toFixed(3));

/**
 * Adds `best_peer` and `vs_best_peer` to each case's Molo row and returns one `impl: 'ratio'` row
 * per case: Molo ÷ every measured peer, the best peer, and whether the target is met.
 */
export function withRatios(rows: readonly Row[], cases: readonly string[]): { rows: Row[]; ratios: Row[] } {
  const out: Row[] = [];
  const ratios: Row[] = [];
  for (const name of cases) {
    const caseRows = rows.filter((row) => row.case === name);
    if (caseRows.length === 0) continue;
    const molo = caseRows.find((row) => row.impl === 'molo');
    const peers = caseRows.filter((row) => row.impl !== 'molo' && measured(row));
    const best = peers.reduce<(Row & { ops_per_s: number }) | undefined>((top, row) => (measured(row) && (top === undefined || row.ops_per_s > top.ops_per_s) ? row : top), undefined);
    const target = TARGETS[name];
    const summary: Record<string, unknown> = { case: name, impl: 'ratio', ops_per_s: null, best_peer: best?.impl ?? null };
    let vsBest: number | null = null;
    if (molo !== undefined && measured(molo)) {
      for (const peer of peers) summary[`vs_${peer.impl}`] = ratio(molo.ops_per_s, peer.ops_per_s as number);
      if (best !== undefined) vsBest = ratio(molo.ops_per_s, best.ops_per_s);
    }
    summary.vs_best_peer = vsBest;
    if (target !== undefined) {
      summary.target = `vs_best_peer >= ${target}`;
      summary.target_met = vsBest === null ? null : vsBest >= target;
    }
    for (const row of caseRows) out.push(row.impl === 'molo' ? { ...row, best_peer: best?.impl ?? null, vs_best_peer: vsBest } : row);
    ratios.push(summary as unknown as Row);
  }
  return { rows: out, ratios };
}

const integer = (value: number): string => Math.round(value).toLocaleString('en-US');

export function resultTable(rows: readonly Row[]): string {
  const body = rows.map((row) => {
    if (!measured(row)) {
      const why = typeof row.unavailable === 'string' ? row.unavailable : `FAILED: ${String(row.error)}`;
      return [row.case, row.impl, '', '', '', '', '', '', why.split('\n')[0]!];
    }
    return [
      row.case,
      row.impl,
      typeof row.n === 'number' ? `${integer(row.n)} ${String(row.unit)}` : '',
      integer(row.ops_per_s),
      spreadCell(row),
      typeof row.median_ms === 'number' ? row.median_ms.toFixed(1) : '',
      typeof row.cpu_us_per_op === 'number' ? row.cpu_us_per_op.toFixed(2) : '',
      typeof row.vs_best_peer === 'number' ? `${row.vs_best_peer.toFixed(2)}x` : '',
      '',
    ];
  });
  return formatTable(['case', 'impl', 'size', 'ops/s (median)', 'spread', 'median ms', 'cpu µs/op', 'molo/best', 'note'], body);
}

const times = (value: unknown): string => (typeof value === 'number' ? `${value.toFixed(2)}x` : 'n/a');

/** One line per case: Molo ÷ best peer against the target, then Molo ÷ each peer. */
export function ratioLines(ratios: readonly Row[]): string {
  const lines = ratios.map((row) => {
    const verdict = row.target_met === true ? 'met' : row.target_met === false ? 'MISSED' : 'no data';
    const target = TARGETS[row.case];
    const peers = Object.keys(row)
      .filter((key) => key.startsWith('vs_') && key !== 'vs_best_peer')
      .map((key) => `÷${key.slice(3)} ${times(row[key])}`);
    const best = `molo÷best peer (${String(row.best_peer ?? 'none')}) ${times(row.vs_best_peer)}`;
    return `${row.case.padEnd(14)} ${best} [target ≥ ${String(target)}: ${verdict}]${peers.length > 0 ? ` | ${peers.join('  ')}` : ''}`;
  });
  return ['Ratios (Molo ÷ peer, ops/s, higher is better):', ...lines].join('\n');
}
