/**
 * The actors suite's cases, their sizes and the measurement helpers every implementation shares.
 * Each implementation (molo.ts, xstate.ts, raw.ts, erlang/molo_bench.erl) runs the same workload
 * with the same sizes; `suite.ts` runs each (case, implementation) pair in a fresh process.
 */
import { performance } from 'node:perf_hooks';
import { median, roundFields, type Row } from '../suite.js';

/** Molo's own: send and call to an actor placed in a worker thread or a child process. */
export const PLACED_CASES = ['send_thread', 'send_process', 'call_thread', 'call_process'] as const;
export const CASES = ['send', 'send_10k', 'call', 'spawn', 'idle', 'restart', 'one_for_all', ...PLACED_CASES] as const;
export type CaseName = (typeof CASES)[number];
export type PlacedCase = (typeof PLACED_CASES)[number];

/** The local case a placed case is compared with. */
export const LOCAL_OF: Readonly<Record<PlacedCase, CaseName>> = {
  send_thread: 'send',
  send_process: 'send',
  call_thread: 'call',
  call_process: 'call',
};

/**
 * xstate appears twice: `xstate-callback` is a `fromCallback` actor (xstate's lightest, a bare
 * receive callback), `xstate-machine` a `createMachine` actor whose transition runs `assign`,
 * which is what users of xstate mean by an actor. Both are real `actor.send` paths.
 */
export const IMPLS = ['molo', 'xstate-callback', 'xstate-machine', 'raw', 'erlang'] as const;
export type Impl = (typeof IMPLS)[number];

/**
 * Pairs with nothing to measure: the raw queue has no supervision, so nothing to restart; the
 * xstate machine is measured on the message paths (its spawn and supervision are xstate-callback's);
 * placement is Molo's alone (its ratio is to Molo's local case).
 */
export const NOT_APPLICABLE: Readonly<Partial<Record<Impl, readonly CaseName[]>>> = {
  raw: ['restart', 'one_for_all', ...PLACED_CASES],
  'xstate-callback': PLACED_CASES,
  'xstate-machine': ['send_10k', 'spawn', 'idle', 'restart', 'one_for_all', ...PLACED_CASES],
  erlang: PLACED_CASES,
};

/** send_10k spreads the same messages over this many actors, one after the other in turn. */
export const MANY_ACTORS = 10_000;

/** Every implementation sends these, so none pays for a payload the others skip. */
export interface MessagePayload {
  readonly type: 'msg';
  readonly value: number;
}
export interface CallPayload {
  readonly type: 'call';
  readonly value: number;
}

export function applies(impl: Impl, name: CaseName): boolean {
  return !(NOT_APPLICABLE[impl]?.includes(name) ?? false);
}

export interface Sizes {
  /** Messages (send), round trips (call), actors (spawn, idle), restarts (restart), children (one_for_all). */
  readonly n: number;
  /** Timed repetitions after the warm-up: throughput cases report the median, latency cases pool samples. */
  readonly rounds: number;
  /** Size of the untimed warm-up run (JIT). */
  readonly warmup: number;
}

/**
 * restart: `n` restarts, each against a fresh one_for_one supervisor (RESTART_BATCH = 1), so
 * every sample is the same first restart. OTP's supervisor filters its list of restarts within the
 * period on every restart, so one supervisor kept for 1,000 restarts grows that list and times its
 * scan rather than the restart; Molo's RestartLog ages restarts off the front in amortized O(1).
 * one_for_all: `n` children, `rounds` timed crashes.
 */
export const SIZES: Readonly<Record<CaseName, { readonly full: Sizes; readonly quick: Sizes }>> = {
  send: { full: { n: 1_000_000, rounds: 3, warmup: 200_000 }, quick: { n: 100_000, rounds: 1, warmup: 20_000 } },
  send_10k: { full: { n: 1_000_000, rounds: 3, warmup: 200_000 }, quick: { n: 100_000, rounds: 1, warmup: 20_000 } },
  call: { full: { n: 100_000, rounds: 3, warmup: 20_000 }, quick: { n: 10_000, rounds: 1, warmup: 2_000 } },
  spawn: { full: { n: 100_000, rounds: 3, warmup: 20_000 }, quick: { n: 10_000, rounds: 1, warmup: 2_000 } },
  idle: { full: { n: 1_000_000, rounds: 1, warmup: 100_000 }, quick: { n: 100_000, rounds: 1, warmup: 10_000 } },
  restart: { full: { n: 10_000, rounds: 1, warmup: 2_000 }, quick: { n: 1_000, rounds: 1, warmup: 200 } },
  one_for_all: { full: { n: 1_000, rounds: 20, warmup: 3 }, quick: { n: 1_000, rounds: 3, warmup: 1 } },
  send_thread: { full: { n: 1_000_000, rounds: 1, warmup: 100_000 }, quick: { n: 50_000, rounds: 1, warmup: 5_000 } },
  send_process: { full: { n: 1_000_000, rounds: 1, warmup: 100_000 }, quick: { n: 50_000, rounds: 1, warmup: 5_000 } },
  call_thread: { full: { n: 20_000, rounds: 1, warmup: 2_000 }, quick: { n: 2_000, rounds: 1, warmup: 200 } },
  call_process: { full: { n: 20_000, rounds: 1, warmup: 2_000 }, quick: { n: 2_000, rounds: 1, warmup: 200 } },
};

export const RESTART_BATCH = 1;
/** High enough never to trip: restarts are not what these cases limit. */
export const SUPERVISOR_INTENSITY = 1_000_000;
export const SUPERVISOR_PERIOD_MS = 1_000;

export function sizesFor(name: CaseName, quick: boolean): Sizes {
  return SIZES[name][quick ? 'quick' : 'full'];
}

/** One implementation's workloads; a case it lacks is reported as not applicable. */
export type CaseRunner = (sizes: Sizes) => Promise<Row>;
export type ImplCases = Partial<Record<CaseName, CaseRunner>>;

export const now = (): number => performance.now();

export { median };

export function mean(values: readonly number[]): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** Nearest-rank percentile of already sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

/**
 * Throughput: runs `body(n)` once at warm-up size, then `rounds` times at full size; each call
 * returns its elapsed ms. Reports the median rate.
 */
export async function throughput(
  name: CaseName,
  impl: Impl,
  sizes: Sizes,
  body: (n: number) => Promise<number>,
): Promise<Row> {
  await body(sizes.warmup);
  collectGarbage();
  const rates: number[] = [];
  for (let i = 0; i < sizes.rounds; i++) {
    const ms = await body(sizes.n);
    rates.push(sizes.n / (ms / 1_000));
    collectGarbage();
  }
  const fields = roundFields(rates);
  return { case: name, impl, ...fields, n: sizes.n, us_per_op: round(1e6 / fields.ops_per_s, 3) };
}

/** Latency samples in µs → a row with mean, p50, p99 and max. */
export function latencyRow(name: CaseName, impl: Impl, samplesUs: number[], extra: Record<string, unknown> = {}): Row {
  const sorted = [...samplesUs].sort((a, b) => a - b);
  const meanUs = mean(sorted);
  return {
    case: name,
    impl,
    ops_per_s: Math.round(1e6 / meanUs),
    samples: sorted.length,
    mean_us: round(meanUs),
    p50_us: round(percentile(sorted, 50)),
    p99_us: round(percentile(sorted, 99)),
    max_us: round(sorted[sorted.length - 1]!),
    ...extra,
  };
}

/** one_for_all: per-crash times in ms for `children` children → mean/p50/max and children restarted per second. */
export function groupRestartRow(impl: Impl, children: number, trialsMs: number[]): Row {
  const sorted = [...trialsMs].sort((a, b) => a - b);
  const meanMs = mean(sorted);
  return {
    case: 'one_for_all',
    impl,
    ops_per_s: Math.round(children / (meanMs / 1_000)),
    children,
    trials: sorted.length,
    ms: round(meanMs, 3),
    p50_ms: round(percentile(sorted, 50), 3),
    max_ms: round(sorted[sorted.length - 1]!, 3),
  };
}

/** Full collection when the process runs with --expose-gc (the suite's workers do). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) {
    gc();
    gc();
  }
}

export function heapUsed(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/**
 * idle: warm up with a small population, then measure the time to create `n` idle actors and the
 * heap they hold. `populate` returns the live population, which is kept reachable until the heap
 * has been measured (else V8 frees it first), then released with `release`.
 */
export function idleRow<P>(
  impl: Impl,
  sizes: Sizes,
  populate: (n: number) => P,
  count: (population: P) => number,
  release: (population: P) => void,
): Row {
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') throw new Error('idle needs node --expose-gc');
  release(populate(sizes.warmup));
  const before = heapUsed();
  const start = now();
  const population = populate(sizes.n);
  const ms = now() - start;
  const after = heapUsed();
  const alive = count(population);
  if (alive !== sizes.n) throw new Error(`expected ${sizes.n} live actors, found ${alive}`);
  release(population);
  return {
    case: 'idle',
    impl,
    ops_per_s: Math.round(sizes.n / (ms / 1_000)),
    n: sizes.n,
    ms: round(ms, 1),
    bytes_per_actor: round((after - before) / sizes.n, 1),
  };
}

/** A promise with its resolver, for "wait until the handler saw the last message". */
export function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
