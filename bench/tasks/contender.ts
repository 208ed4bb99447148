/**
 * One task queue in the tasks suite: Molo (SQLite or Postgres; `loop` or `thread` handlers),
 * BullMQ, pg-boss, graphile-worker. Each runs the same phases on no-op tasks, timed the way a user
 * waits for them: enqueue n (in bulk as its docs recommend, or one call at a time with a few in
 * flight), start `concurrency` handlers (start-up timed apart), process until the n-th completion
 * is recorded by the system (see `completion`), stop (shutdown timed apart); and the idle-queue
 * latency from one enqueue to its handler's start.
 */
import { performance } from 'node:perf_hooks';

export interface TaskContender {
  readonly impl: string;
  /** What a completion is counted on: the system's own "recorded" signal where it has one. */
  readonly completion: string;
  /** Connects and prepares its schema, or throws (its rows then say it is unavailable). */
  open(): Promise<void>;
  /** The durability setting its store ran with, read from the store where it can be (after `open`). */
  durability(): Promise<string>;
  /** A fresh queue with no task and no worker (untimed). */
  reset(): Promise<void>;
  /** Enqueues the tasks `seqs` in one bulk call (the suite calls it per ENQUEUE_BATCH). */
  enqueueBulk(seqs: readonly number[]): Promise<void>;
  /** Enqueues one task carrying `seq`. */
  enqueueOne(seq: number): Promise<void>;
  /** `concurrency` handlers that report each start and each recorded completion. */
  workers(concurrency: number): WorkerControl<unknown>;
  /**
   * For a system whose completion signal comes before its store records it: whether every task of
   * this round is now recorded as done (read from the store; polled once the signals are all in).
   */
  allRecorded?(): Promise<boolean>;
  close(): Promise<void>;
}

/** Workers a contender starts and stops; `events.started(seq)` at a handler's start, `events.completed()` once its completion is recorded. */
export interface WorkerControl<W> {
  start(events: WorkerEvents): Promise<W>;
  stop(workers: W): Promise<unknown>;
}

export interface WorkerEvents {
  started(seq: number): void;
  completed(): void;
}

/** Tasks handled at once in the processing and latency phases. */
export const CONCURRENCY = 10;
/** Tasks per bulk insert, where a peer takes them in batches. */
export const ENQUEUE_BATCH = 1_000;
/** Single enqueues in flight at once (as an HTTP service taking requests would have). */
export const ENQUEUE_IN_FLIGHT = 10;

/** Counts events; `done` resolves at n. */
export class Countdown {
  #count = 0;
  #resolve!: () => void;
  readonly done: Promise<void>;
  constructor(readonly n: number) {
    this.done = new Promise((resolve) => (this.#resolve = resolve));
    if (n <= 0) this.#resolve();
  }
  tick(): void {
    if (++this.#count === this.n) this.#resolve();
  }
  get count(): number {
    return this.#count;
  }
}

/** Tasks run (and not measured) before the latency samples, so every worker is up. */
export const LATENCY_WARMUP = 3 * CONCURRENCY;

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Enqueues seqs 0..n-1 in bulk calls of ENQUEUE_BATCH, one after another. */
export async function enqueueInBatches(contender: TaskContender, n: number): Promise<void> {
  for (let start = 0; start < n; start += ENQUEUE_BATCH) {
    await contender.enqueueBulk(Array.from({ length: Math.min(ENQUEUE_BATCH, n - start) }, (_, i) => start + i));
  }
}

/** Enqueues seqs 0..n-1 one call each, ENQUEUE_IN_FLIGHT at a time. */
export async function enqueueOneByOne(contender: TaskContender, n: number): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) await contender.enqueueOne(next++);
  };
  await Promise.all(Array.from({ length: Math.min(ENQUEUE_IN_FLIGHT, n) }, lane));
}

/** The phases after an enqueue, in milliseconds from the workers' start call. */
export interface ProcessTimes {
  /** `start()` called → it resolved (the workers are up). */
  readonly startupMs: number;
  /** `start()` called → the first handler started. */
  readonly firstStartMs: number;
  /** `start()` resolved → the n-th completion recorded (what a fetch before the first handler costs is in it). */
  readonly processingMs: number;
  /** `start()` called → the n-th completion recorded. */
  readonly untilLastMs: number;
  /** `stop()` called → it resolved. */
  readonly shutdownMs: number;
}

/** Starts the workers on a queue holding n tasks, waits for n recorded completions, stops them. */
export async function processAll(contender: TaskContender, n: number, concurrency: number): Promise<ProcessTimes> {
  const control = contender.workers(concurrency);
  const completed = new Countdown(n);
  let firstStart: number | undefined;
  const t0 = performance.now();
  const workers = await control.start({ started: () => void (firstStart ??= performance.now()), completed: () => completed.tick() });
  const up = performance.now();
  let last: number;
  let stopping = 0;
  try {
    await completed.done;
    if (contender.allRecorded !== undefined) while (!(await contender.allRecorded())) await new Promise((done) => setTimeout(done, 2));
    last = performance.now();
  } finally {
    stopping = performance.now();
    await control.stop(workers);
  }
  const stopped = performance.now();
  const first = firstStart ?? last;
  return { startupMs: up - t0, firstStartMs: first - t0, processingMs: last - up, untilLastMs: last - t0, shutdownMs: stopped - stopping };
}

/**
 * The latency phase on workers of their own: warm-up tasks (negative seqs, all at once) run first
 * and are not counted (a worker still starting is not what an idle queue's latency means); then
 * `samples` times one enqueue and the milliseconds until its handler starts, one at a time.
 */
export async function measureLatency(contender: TaskContender, samples: number, concurrency: number): Promise<number[]> {
  let onStart: ((seq: number) => void) | undefined;
  const control = contender.workers(concurrency);
  const workers = await control.start({ started: (seq) => onStart?.(seq), completed: () => {} });
  try {
    const warm = new Countdown(LATENCY_WARMUP);
    onStart = (seq) => {
      if (seq < 0) warm.tick();
    };
    for (let seq = -1; seq >= -LATENCY_WARMUP; seq--) await contender.enqueueOne(seq);
    await warm.done;
    await new Promise((done) => setTimeout(done, 200));
    const results: number[] = [];
    for (let seq = 0; seq < samples; seq++) {
      let resolve!: () => void;
      const started = new Promise<void>((done) => (resolve = done));
      onStart = (seen) => {
        if (seen === seq) resolve();
      };
      const t0 = performance.now();
      await contender.enqueueOne(seq);
      await started;
      results.push(performance.now() - t0);
      // The queue goes idle again before the next sample.
      await new Promise((done) => setTimeout(done, 10));
    }
    return results;
  } finally {
    onStart = undefined;
    await control.stop(workers);
  }
}
