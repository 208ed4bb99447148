/**
 * The kv suite's table and ratios: Molo's ops/s ÷ the case's peer (higher is better), written on
 * Molo's row (`vs_<peer>`) and as one `impl: 'ratio'` row per case with its target, when it has one.
 */
import { formatTable, spreadCell, type Row } from '../suite.js';

/** Molo ÷ peer targets (reported, not asserted). */
export const TARGETS: Readonly<Record<string, { readonly peer: string; readonly ratio: number }>> = {
  cache_hit: { peer: 'lru-cache', ratio: 0.8 },
  kv_memory_set: { peer: 'redis', ratio: 10 },
  kv_memory_get: { peer: 'redis', ratio: 10 },
};

const measured = (row: Row | undefined): row is Row & { ops_per_s: number } => typeof row?.ops_per_s === 'number' && row.ops_per_s > 0;

/** Adds `vs_<peer>` to each case's Molo row and returns one ratio row per case. */
export function withRatios(rows: readonly Row[], cases: readonly string[]): { rows: Row[]; ratios: Row[] } {
  const out: Row[] = [];
  const ratios: Row[] = [];
  for (const name of cases) {
    const caseRows = rows.filter((row) => row.case === name);
    if (caseRows.length === 0) continue;
    const molo = caseRows.find((row) => row.impl === 'molo');
    const summary: Record<string, unknown> = { case: name, impl: 'ratio', ops_per_s: null };
    const vs: Record<string, number> = {};
    for (const peer of caseRows.filter((row) => row.impl !== 'molo')) {
      summary[`vs_${peer.impl}`] = measured(molo) && measured(peer) ? (vs[`vs_${peer.impl}`] = Number((molo.ops_per_s / peer.ops_per_s).toFixed(3))) : null;
    }
    const target = TARGETS[name];
    if (target !== undefined) {
      const ratio = summary[`vs_${target.peer}`];
      summary.target = `vs_${target.peer} >= ${target.ratio}`;
      summary.target_met = typeof ratio === 'number' ? ratio >= target.ratio : null;
    }
    for (const row of caseRows) out.push(row.impl === 'molo' ? { ...row, ...vs } : row);
    ratios.push(summary as unknown as Row);
  }
  return { rows: out, ratios };
}

const integer = (value: number): string => Math.round(value).toLocaleString('en-US');

export function resultTable(rows: readonly Row[]): string {
  const body = rows
    .filter((row) => row.impl !== 'ratio')
    .map((row) => {
      if (!measured(row)) {
        const why = typeof row.unavailable === 'string' ? row.unavailable : `FAILED: ${String(row.error)}`;
        return [row.case, row.impl, '', '', '', '', '', why.split('\n')[0]!];
      }
      const ratio = Object.entries(row).find(([key, value]) => key.startsWith('vs_') && key !== 'vs_best_peer' && typeof value === 'number');
      return [
        row.case,
        row.impl,
        typeof row.n === 'number' ? `${integer(row.n)} ${String(row.unit)}` : '',
        integer(row.ops_per_s),
        spreadCell(row),
        typeof row.cpu_us_per_op === 'number' ? row.cpu_us_per_op.toFixed(3) : '',
        ratio !== undefined ? `${(ratio[1] as number).toFixed(2)}x ${ratio[0].slice(3)}` : '',
        '',
      ];
    });
  return formatTable(['case', 'impl', 'size', 'ops/s (median)', 'spread', 'cpu µs/op', 'molo/peer', 'note'], body);
}

/** One line per ratio row: Molo ÷ each peer, and the target when there is one. */
export function ratioLines(ratios: readonly Row[]): string {
  const lines = ratios.map((row) => {
    const peers = Object.keys(row)
      .filter((key) => key.startsWith('vs_') && key !== 'vs_best_peer')
      .map((key) => `÷${key.slice(3)} ${typeof row[key] === 'number' ? `${(row[key] as number).toFixed(2)}x` : 'n/a'}`);
    const target = typeof row.target === 'string' ? ` [target ${row.target}: ${row.target_met === true ? 'met' : row.target_met === false ? 'MISSED' : 'no data'}]` : '';
    const topicTargets = Object.keys(row)
      .filter((key) => key.startsWith('target_vs_'))
      .map((key) => `${key.slice('target_'.length)} ${String(row[key])}`);
    const topic = topicTargets.length > 0 ? ` [targets ${topicTargets.join(', ')}: ${row.target_met === true ? 'met' : row.target_met === false ? 'MISSED' : 'no data'}]` : '';
    return `${row.case.padEnd(18)} molo ${peers.join('  ')}${target}${topic}`;
  });
  return ['Ratios (Molo ÷ peer, ops/s, higher is better):', ...lines].join('\n');
}
