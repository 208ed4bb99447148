/**
 * The ORM's overhead over the raw client, measured in pairs: many short runs, the ORM and the raw
 * client back to back (order alternating, so neither always runs on the warmer or the quieter
 * side), and the median of the per-pair ratios. Dividing two separate medians of a few long rounds
 * (the suite's throughput table) lets a burst of load on a shared machine land on one side only:
 * those rounds spread 30-160 % there, and the quotient of their medians flipped by more than the
 * overhead being measured. Both sides get the same batches, resets and forced GC before each run.
 */
import { performance } from 'node:perf_hooks';
import { collectGarbage } from '../data/rounds.js';
import { median } from '../suite.js';

/** One side of a pair: untimed reset, then the timed work returning its checksum. */
export interface PairSide {
  reset?(): Promise<void>;
  run(n: number): Promise<number>;
}

export interface PairedOptions {
  /** Operations in one run of each side. */
  readonly n: number;
  readonly pairs: number;
  /** Untimed pairs first (fresh connections, statement caches, JIT). */
  readonly warmupPairs: number;
  /** The checksum a run of `n` must return; unchecked when absent. */
  readonly expected?: number;
}

export interface PairedOverhead {
  /** Median over pairs of (ORM wall time ÷ raw wall time) − 1. */
  readonly wall: number;
  /** The lower and upper quartiles of the same ratios, − 1: how much the pairs disagreed. */
  readonly wallLow: number;
  readonly wallHigh: number;
  /** Median over pairs of (ORM CPU time ÷ raw CPU time) − 1; this process, every thread. */
  readonly cpu: number;
  readonly pairs: number;
  readonly n: number;
}

interface Sample {
  readonly wallMs: number;
  readonly cpuMs: number;
}

async function timedRun(side: PairSide, options: PairedOptions): Promise<Sample> {
  await side.reset?.();
  collectGarbage();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const checksum = await side.run(options.n);
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  if (options.expected !== undefined && checksum !== options.expected) throw new Error(`wrong result: checksum ${checksum}, expected ${options.expected}`);
  return { wallMs, cpuMs: (used.user + used.system) / 1_000 };
}

const quantile = (values: readonly number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

export async function pairedOverhead(orm: PairSide, raw: PairSide, options: PairedOptions): Promise<PairedOverhead> {
  for (let i = 0; i < options.warmupPairs; i++) for (const side of i % 2 === 0 ? [orm, raw] : [raw, orm]) await timedRun(side, options);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let pair = 0; pair < options.pairs; pair++) {
    const ormFirst = pair % 2 === 0;
    const first = await timedRun(ormFirst ? orm : raw, options);
    const second = await timedRun(ormFirst ? raw : orm, options);
    const [o, r] = ormFirst ? [first, second] : [second, first];
    wall.push(o.wallMs / r.wallMs);
    cpu.push(o.cpuMs / r.cpuMs);
  }
  return {
    wall: median(wall) - 1,
    wallLow: quantile(wall, 0.25) - 1,
    wallHigh: quantile(wall, 0.75) - 1,
    cpu: median(cpu) - 1,
    pairs: options.pairs,
    n: options.n,
  };
}

/** `12.3% (IQR 8.1–15.0%, CPU 10.2%, 20 pairs of 1,000)` */
export function pairedText(result: PairedOverhead): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  return `${pct(result.wall)} (IQR ${pct(result.wallLow)}–${pct(result.wallHigh)}, CPU ${pct(result.cpu)}, ${result.pairs} pairs of ${result.n.toLocaleString('en-US')})`;
}
