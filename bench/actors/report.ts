/**
 * The actors suite's table and ratios. Every ratio is Molo ÷ peer:
 * - send, call, spawn: ops/s (higher is better); target vs Erlang ≥ 1.0; call also ≥ 0.5× raw
 *   (the promise-mailbox floor).
 * - send_10k: ops/s spreading the same messages over 10,000 actors; with send in the same run, the
 *   loss (send ÷ send_10k) per implementation, Molo's target ≤ 1.5.
 * - idle: bytes per actor (target < 1024), and spawn time and bytes ÷ peer (lower is better).
 * - restart: mean latency (target vs Erlang ≤ 4) and p99 (lower is better).
 * - one_for_all: time to restart every child (target vs Erlang ≤ 2; lower is better).
 * The placed cases (send and call to a thread or process host) are Molo's alone: their ratio is to
 * Molo's local send or call, with the bytes per message on the wire and the peak RSS.
 */
import { formatTable, spreadCell, type Row } from '../suite.js';
import { IMPLS, LOCAL_OF, PLACED_CASES, type CaseName, type Impl, type PlacedCase } from './cases.js';

type Peer = Exclude<Impl, 'molo'>;
const PEERS: readonly Peer[] = IMPLS.filter((impl): impl is Peer => impl !== 'molo');

interface Target {
  readonly op: '>=' | '<=' | '<';
  readonly value: number;
}

interface RatioSpec {
  /** A second target, against the raw floor (call). */
  readonly floor?: Target;
  /** Field compared, Molo ÷ peer. */
  readonly metric: string;
  readonly label: string;
  readonly better: 'higher' | 'lower';
  /** Target of the ratio against Erlang. */
  readonly target?: Target;
  /** Further fields compared the same way, reported as `<field>_vs_<peer>`. */
  readonly also?: readonly { readonly metric: string; readonly label: string }[];
  /** A target on Molo's own value of a field (idle's bytes per actor). */
  readonly absolute?: { readonly metric: string; readonly label: string; readonly target: Target };
}

type PeerCase = Exclude<CaseName, PlacedCase>;
const isPlaced = (name: string): name is PlacedCase => (PLACED_CASES as readonly string[]).includes(name);

const SPECS: Readonly<Record<PeerCase, RatioSpec>> = {
  send: { metric: 'ops_per_s', label: 'ops/s', better: 'higher', target: { op: '>=', value: 1 } },
  send_10k: { metric: 'ops_per_s', label: 'ops/s', better: 'higher' },
  call: { metric: 'ops_per_s', label: 'ops/s', better: 'higher', target: { op: '>=', value: 1 }, floor: { op: '>=', value: 0.5 } },
  spawn: { metric: 'ops_per_s', label: 'ops/s', better: 'higher', target: { op: '>=', value: 1 } },
  idle: {
    metric: 'ms',
    label: 'spawn time',
    better: 'lower',
    also: [{ metric: 'bytes_per_actor', label: 'bytes' }],
    absolute: { metric: 'bytes_per_actor', label: 'bytes/actor', target: { op: '<', value: 1024 } },
  },
  restart: {
    metric: 'mean_us',
    label: 'mean latency',
    better: 'lower',
    target: { op: '<=', value: 4 },
    also: [{ metric: 'p99_us', label: 'p99' }],
  },
  one_for_all: { metric: 'ms', label: 'time', better: 'lower', target: { op: '<=', value: 2 } },
};

/** Molo's send_10k loss target: send ÷ send_10k. */
export const MANY_ACTORS_LOSS_TARGET = 1.5;

/** The field a case compares (ops/s for throughput, mean µs for restart, …). */
export function metricOf(name: CaseName): string {
  return isPlaced(name) ? 'ops_per_s' : SPECS[name].metric;
}

const meets = (value: number, target: Target): boolean =>
  target.op === '>=' ? value >= target.value : target.op === '<=' ? value <= target.value : value < target.value;

const TARGET_TEXT = { '>=': '≥', '<=': '≤', '<': '<' } as const;

function numberOf(row: Row | undefined, field: string): number | undefined {
  const value = row?.[field];
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

const ratioOf = (molo: number | undefined, peer: number | undefined): number | null =>
  molo === undefined || peer === undefined ? null : Number((molo / peer).toFixed(3));

/** One `impl: 'ratio'` row per case: Molo ÷ each peer, and whether the targets are met. */
export function ratioRows(rows: readonly Row[], cases: readonly CaseName[]): Row[] {
  return cases.map((name) => {
    if (isPlaced(name)) return placedRatio(rows, name);
    const spec = SPECS[name];
    const byImpl = new Map(rows.filter((row) => row.case === name).map((row) => [row.impl, row]));
    const molo = byImpl.get('molo');
    const ratio: Record<string, unknown> = { case: name, impl: 'ratio', ops_per_s: null, metric: spec.metric, better: spec.better };
    for (const peer of PEERS) ratio[`vs_${peer}`] = ratioOf(numberOf(molo, spec.metric), numberOf(byImpl.get(peer), spec.metric));
    for (const also of spec.also ?? []) {
      for (const peer of PEERS) {
        ratio[`${also.metric}_vs_${peer}`] = ratioOf(numberOf(molo, also.metric), numberOf(byImpl.get(peer), also.metric));
      }
    }
    const verdicts: boolean[] = [];
    if (spec.target !== undefined) {
      const value = ratio.vs_erlang as number | null;
      ratio.target = `vs_erlang ${TARGET_TEXT[spec.target.op]} ${spec.target.value}`;
      ratio.target_met = value === null ? null : meets(value, spec.target);
      if (value !== null) verdicts.push(meets(value, spec.target));
    }
    if (spec.absolute !== undefined) {
      const value = numberOf(molo, spec.absolute.metric);
      ratio[spec.absolute.metric] = value ?? null;
      ratio[`${spec.absolute.metric}_target`] = `${TARGET_TEXT[spec.absolute.target.op]} ${spec.absolute.target.value}`;
      ratio[`${spec.absolute.metric}_target_met`] = value === undefined ? null : meets(value, spec.absolute.target);
      if (value !== undefined) verdicts.push(meets(value, spec.absolute.target));
    }
    if (spec.floor !== undefined) {
      const value = ratio.vs_raw as number | null;
      ratio.floor_target = `vs_raw ${TARGET_TEXT[spec.floor.op]} ${spec.floor.value}`;
      ratio.floor_met = value === null ? null : meets(value, spec.floor);
      if (value !== null) verdicts.push(meets(value, spec.floor));
    }
    if (name === 'send_10k') {
      const sendRows = new Map(rows.filter((row) => row.case === 'send').map((row) => [row.impl, row]));
      for (const impl of IMPLS) {
        const loss = ratioOf(numberOf(sendRows.get(impl), 'ops_per_s'), numberOf(byImpl.get(impl), 'ops_per_s'));
        if (loss !== null) ratio[`loss_${impl}`] = loss;
      }
      const moloLoss = ratio.loss_molo as number | undefined;
      ratio.loss_target = `loss_molo <= ${MANY_ACTORS_LOSS_TARGET}`;
      ratio.loss_met = moloLoss === undefined ? null : moloLoss <= MANY_ACTORS_LOSS_TARGET;
      if (moloLoss !== undefined) verdicts.push(moloLoss <= MANY_ACTORS_LOSS_TARGET);
    }
    ratio.met = verdicts.length === 0 ? null : verdicts.every(Boolean);
    return ratio as unknown as Row;
  });
}

/** Placed ÷ local ops/s, with what the placed row measured of bytes and memory. */
function placedRatio(rows: readonly Row[], name: PlacedCase): Row {
  const placed = rows.find((row) => row.case === name && row.impl === 'molo');
  const local = rows.find((row) => row.case === LOCAL_OF[name] && row.impl === 'molo');
  return {
    case: name,
    impl: 'ratio',
    ops_per_s: null,
    metric: 'ops_per_s',
    better: 'higher',
    local_case: LOCAL_OF[name],
    vs_local: ratioOf(numberOf(placed, 'ops_per_s'), numberOf(local, 'ops_per_s')),
    bytes_per_msg: numberOf(placed, 'bytes_per_msg') ?? null,
    peak_rss_mb: numberOf(placed, 'peak_rss_mb') ?? null,
    met: null,
  };
}

const integer = (value: number): string => Math.round(value).toLocaleString('en-US');
const decimal = (value: number, digits = 2): string =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function cell(row: Row, field: string, format: (value: number) => string): string {
  const value = row[field];
  return typeof value === 'number' ? format(value) : '';
}

function sizeOf(row: Row): string {
  if (row.case === 'one_for_all' && typeof row.children === 'number') return `${integer(row.children)}x${String(row.trials)}`;
  if (typeof row.samples === 'number') return integer(row.samples);
  return typeof row.n === 'number' ? integer(row.n) : '';
}

export function resultTable(rows: readonly Row[]): string {
  const body = rows
    .filter((row) => row.impl !== 'ratio')
    .map((row) => {
      if (row.ops_per_s === null) {
        const why = typeof row.unavailable === 'string' ? `unavailable: ${row.unavailable}` : `FAILED: ${String(row.error)}`;
        return [row.case, row.impl, '', '', '', '', '', '', '', '', '', why.split('\n')[0]!];
      }
      const meanUs = typeof row.mean_us === 'number' ? row.mean_us : row.us_per_op;
      return [
        row.case,
        row.impl,
        sizeOf(row),
        integer(row.ops_per_s),
        typeof meanUs === 'number' ? decimal(meanUs, 3) : '',
        cell(row, 'p99_us', (value) => decimal(value)),
        cell(row, 'ms', (value) => decimal(value, row.case === 'idle' ? 1 : 3)),
        cell(row, 'bytes_per_actor', (value) => decimal(value, 1)),
        cell(row, 'bytes_per_msg', (value) => decimal(value, 1)),
        cell(row, 'peak_rss_mb', (value) => decimal(value, 0)),
        spreadCell(row) || (typeof row.vm_spread_pct === 'number' ? `${row.vm_spread_pct.toFixed(1)}% over ${String(row.vms)} VMs` : ''),
        '',
      ];
    });
  return formatTable(['case', 'impl', 'size', 'ops/s', 'mean µs', 'p99 µs', 'ms', 'bytes/actor', 'bytes/msg', 'peak MB', 'spread', 'note'], body);
}

function ratioText(value: unknown): string {
  return typeof value === 'number' ? `${decimal(value)}x` : 'n/a';
}

function verdict(met: unknown): string {
  return met === true ? 'met' : met === false ? 'MISSED' : 'no data';
}

/** One line per case: the targeted ratio first, then every other Molo ÷ peer ratio. */
export function ratioLines(ratios: readonly Row[]): string {
  const lines = ratios.map((ratio) => {
    if (isPlaced(ratio.case)) {
      const bytes = typeof ratio.bytes_per_msg === 'number' ? `${decimal(ratio.bytes_per_msg, 1)} bytes/msg` : 'bytes n/a';
      const peak = typeof ratio.peak_rss_mb === 'number' ? `peak RSS ${decimal(ratio.peak_rss_mb, 0)} MB` : 'peak RSS n/a';
      return `${ratio.case.padEnd(12)} ops/s placed÷local ${String(ratio.local_case)} ${ratioText(ratio.vs_local)} (higher is better) | ${bytes} | ${peak}`;
    }
    const spec = SPECS[ratio.case as PeerCase];
    const direction = spec.better === 'higher' ? 'higher is better' : 'lower is better';
    const parts: string[] = [];
    if (spec.absolute !== undefined) {
      const value = ratio[spec.absolute.metric];
      const target = spec.absolute.target;
      parts.push(
        `${spec.absolute.label} ${typeof value === 'number' ? decimal(value, 1) : 'n/a'} ` +
          `[target ${TARGET_TEXT[target.op]} ${target.value}: ${verdict(ratio[`${spec.absolute.metric}_target_met`])}]`,
      );
    }
    const peers = PEERS.map((peer) => {
      let text = `÷${peer} ${ratioText(ratio[`vs_${peer}`])}`;
      if (peer === 'erlang' && spec.target !== undefined) {
        text += ` [target ${TARGET_TEXT[spec.target.op]} ${spec.target.value}: ${verdict(ratio.target_met)}]`;
      }
      if (peer === 'raw' && spec.floor !== undefined) {
        text += ` [target ${TARGET_TEXT[spec.floor.op]} ${spec.floor.value}: ${verdict(ratio.floor_met)}]`;
      }
      return text;
    });
    parts.push(`${spec.label} molo${peers.join('  ')} (${direction})`);
    const losses = IMPLS.filter((impl) => typeof ratio[`loss_${impl}`] === 'number').map((impl) => `${impl} ${ratioText(ratio[`loss_${impl}`])}`);
    if (losses.length > 0) {
      parts.push(`loss vs one actor (send ÷ send_10k) ${losses.join('  ')} [molo target ≤ ${MANY_ACTORS_LOSS_TARGET}: ${verdict(ratio.loss_met)}]`);
    }
    for (const also of spec.also ?? []) {
      parts.push(`${also.label} molo${PEERS.map((peer) => `÷${peer} ${ratioText(ratio[`${also.metric}_vs_${peer}`])}`).join('  ')}`);
    }
    return `${ratio.case.padEnd(12)} ${parts.join(' | ')}`;
  });
  return ['Ratios (Molo ÷ peer):', ...lines].join('\n');
}
