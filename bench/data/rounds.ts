/**
 * How the data suite measures: every implementation of a case is opened side by side, warmed up,
 * then timed in interleaved rounds (the order rotates each round, so a burst of load elsewhere on
 * the machine hits every implementation alike). The median round counts, and the spread of all
 * rounds is reported beside it: the best round flatters whichever side had the luckier burst.
 */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { median, roundFields, type Row } from '../suite.js';

/** One implementation of one case. */
export interface Contender {
  readonly impl: string;
  /** Opens connections or files; untimed. */
  open(): Promise<void>;
  /** Untimed work before every run (a fresh table to insert into, say). */
  reset?(): Promise<void>;
  /** The timed work: `n` operations. Returns a checksum the case verifies, so nothing is skipped. */
  run(n: number): Promise<number>;
  close(): Promise<void>;
}

/** An implementation that cannot run here (its module is missing, or it has nothing to measure). */
export interface Absent {
  readonly impl: string;
  readonly unavailable: string;
}

export interface CaseSpec {
  readonly name: string;
  /** What one operation is: 'queries', 'rows', ... */
  readonly unit: string;
  readonly n: number;
  readonly warmupN: number;
  readonly rounds: number;
  /** The checksum `run(n)` must return. */
  expected(n: number): number;
  readonly contenders: readonly (Contender | Absent)[];
}

/** A run that neither finishes nor fails within this is reported as failed rather than hanging the suite. */
const RUN_TIMEOUT_MS = 120_000;

const log = (message: string): void => void process.stderr.write(`${message}\n`);

/** `gc()` even without --expose-gc (bench/run.ts runs under plain tsx): between rounds, not inside them. */
const gc: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed !== undefined) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

export function collectGarbage(): void {
  gc();
  gc();
}

/**
 * Runs `op(0) … op(n - 1)` with at most `window` in flight; `window >= n` issues them all at once.
 * Resolves with the sum of what they return.
 */
/**
 * Issues all `n` requests at once, as application code would (`Promise.all(items.map(...))`):
 * no per-request async wrapper, whose own cost (about 3 µs) would be charged to the driver.
 */
export function issueAll<T>(n: number, op: (i: number) => Promise<T>): Promise<T[]> {
  const pending = new Array<Promise<T>>(n);
  for (let i = 0; i < n; i++) pending[i] = op(i);
  return Promise.all(pending);
}

export function sumOf<T>(items: readonly T[], value: (item: T) => number): number {
  let sum = 0;
  for (const item of items) sum += value(item);
  return sum;
}

export async function concurrently(n: number, window: number, op: (i: number) => Promise<number>): Promise<number> {
  let next = 0;
  let sum = 0;
  const lane = async (): Promise<void> => {
    while (next < n) {
      // Not `sum += await …`: that reads `sum` before the await and loses the other lanes' additions.
      const value = await op(next++);
      sum += value;
    }
  };
  const lanes: Promise<void>[] = [];
  for (let i = 0; i < Math.min(window, n); i++) lanes.push(lane());
  await Promise.all(lanes);
  return sum;
}

async function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${RUN_TIMEOUT_MS / 1_000} s`)), RUN_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface Timing {
  readonly wallMs: number;
  /** This process's CPU time (user + system, every thread): the client's own cost, which the server's share of the cores does not blur. */
  readonly cpuMs: number;
}

async function timedRun(spec: CaseSpec, contender: Contender, n: number): Promise<Timing> {
  await contender.reset?.();
  collectGarbage();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const checksum = await withTimeout(contender.run(n), `${spec.name}/${contender.impl}`);
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const expected = spec.expected(n);
  if (checksum !== expected) throw new Error(`wrong result: checksum ${checksum}, expected ${expected}`);
  return { wallMs, cpuMs: (used.user + used.system) / 1_000 };
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export interface CaseOutcome {
  readonly rows: Row[];
  /** True when an implementation that was there failed (not when one was absent). */
  readonly failed: boolean;
}

/** Opens, warms up, times and closes every contender of a case; one row per implementation. */
export async function measureCase(spec: CaseSpec, mode: string): Promise<CaseOutcome> {
  const base = { case: spec.name, n: spec.n, unit: spec.unit, mode };
  const rows = new Map<string, Row>();
  const live: Contender[] = [];
  const times = new Map<string, Timing[]>();
  let failed = false;
  const fail = (contender: Contender, stage: string, error: unknown): void => {
    failed = true;
    const message = `${stage}: ${messageOf(error)}`;
    rows.set(contender.impl, { ...base, impl: contender.impl, ops_per_s: null, error: message });
    log(`  ${spec.name}/${contender.impl} FAILED ${message}`);
  };

  for (const contender of spec.contenders) {
    if ('unavailable' in contender) {
      rows.set(contender.impl, { ...base, impl: contender.impl, ops_per_s: null, unavailable: contender.unavailable });
      log(`  ${spec.name}/${contender.impl}: ${contender.unavailable}`);
      continue;
    }
    try {
      await withTimeout(contender.open(), `opening ${contender.impl}`);
      await timedRun(spec, contender, spec.warmupN);
      live.push(contender);
      times.set(contender.impl, []);
    } catch (error) {
      fail(contender, 'warm-up', error);
      await withTimeout(contender.close(), `closing ${contender.impl}`).catch(() => undefined);
    }
  }

  try {
    for (let round = 0; round < spec.rounds; round++) {
      const order = live.map((_, i) => live[(i + round) % live.length]!);
      for (const contender of order) {
        if (rows.has(contender.impl)) continue; // failed in an earlier round
        try {
          times.get(contender.impl)!.push(await timedRun(spec, contender, spec.n));
        } catch (error) {
          fail(contender, `round ${round + 1}`, error);
        }
      }
    }
  } finally {
    for (const contender of live) {
      await withTimeout(contender.close(), `closing ${contender.impl}`).catch((error: unknown) =>
        log(`  ${spec.name}/${contender.impl}: close failed: ${messageOf(error)}`),
      );
    }
  }

  for (const contender of live) {
    if (rows.has(contender.impl)) continue;
    const timings = times.get(contender.impl)!;
    const ms = timings.map((timing) => timing.wallMs);
    const cpuMs = median(timings.map((timing) => timing.cpuMs));
    const fields = roundFields(ms.map((wall) => spec.n / (wall / 1_000)));
    const row: Row = {
      ...base,
      impl: contender.impl,
      ...fields,
      median_ms: Number(median(ms).toFixed(2)),
      // Median CPU per operation: what the client spends, server time excluded.
      cpu_us_per_op: Number(((cpuMs * 1_000) / spec.n).toFixed(3)),
    };
    rows.set(contender.impl, row);
    log(`  ${spec.name}/${contender.impl}: ${fields.ops_per_s.toLocaleString('en-US')} ${spec.unit}/s median (${fields.min_ops_per_s}–${fields.max_ops_per_s}, spread ${fields.spread_pct}%)`);
  }
  // Rows in the order the case lists its implementations.
  return { rows: spec.contenders.map((contender) => rows.get(contender.impl)!), failed };
}
