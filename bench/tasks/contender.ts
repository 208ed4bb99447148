/**
 * One task queue in the tasks suite: Molo (SQLite or Postgres; `loop` or `thread` handlers),
 * BullMQ, pg-boss, graphile-worker. Each runs the same phases on no-op tasks: enqueue n (in bulk,
 * the way its docs recommend), then process them with `concurrency` handlers at once (workers
 * started inside the phase), and the idle-queue latency from one enqueue to its handler's start.
 */
export interface TaskContender {
  readonly impl: string;
  /** Connects and prepares its schema, or throws (its rows then say it is unavailable). */
  open(): Promise<void>;
  /** A fresh queue with no task and no worker (untimed). */
  reset(): Promise<void>;
  /** Enqueues n no-op tasks; resolves once all are stored. */
  enqueue(n: number): Promise<void>;
  /** Starts `concurrency` handlers, resolves once n handlers have finished, then stops the workers. */
  process(n: number, concurrency: number): Promise<void>;
  /**
   * With workers idle on an empty queue: `samples` times, enqueues one task and records the
   * milliseconds until its handler starts (`handlerStarted` below); one sample at a time.
   */
  latency(samples: number, concurrency: number): Promise<number[]>;
  close(): Promise<void>;
}

/** Tasks handled at once in the processing and latency phases. */
export const CONCURRENCY = 10;
/** Tasks per bulk insert, where a peer takes them in batches. */
export const ENQUEUE_BATCH = 1_000;

/** Counts finished handlers; `done` resolves at n. */
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

/**
 * The latency loop every contender shares: `enqueueOne(seq)` stores a task carrying `seq`, whose
 * handler calls `started(seq)`; the elapsed time is measured on this thread. Warm-up tasks (negative
 * seqs, all at once) run first and are not counted: a worker still starting (a thread host) is
 * not what an idle queue's latency means.
 */
export async function measureLatency(samples: number, enqueueOne: (seq: number) => Promise<void>, hooks: { started?: (seq: number) => void }): Promise<number[]> {
  const warm = new Countdown(LATENCY_WARMUP);
  hooks.started = (seq) => {
    if (seq < 0) warm.tick();
  };
  for (let seq = -1; seq >= -LATENCY_WARMUP; seq--) await enqueueOne(seq);
  await warm.done;
  await new Promise((done) => setTimeout(done, 200));
  const results: number[] = [];
  for (let seq = 0; seq < samples; seq++) {
    let resolve!: () => void;
    const started = new Promise<void>((done) => (resolve = done));
    hooks.started = (seen) => {
      if (seen === seq) resolve();
    };
    const t0 = performance.now();
    await enqueueOne(seq);
    await started;
    results.push(performance.now() - t0);
    // The queue goes idle again before the next sample.
    await new Promise((done) => setTimeout(done, 10));
  }
  hooks.started = undefined;
  return results;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Workers a contender starts (each handler calls `handled(seq)`) and stops. */
export interface WorkerControl<W> {
  start(handled: (seq: number) => void): Promise<W>;
  stop(workers: W): Promise<unknown>;
}

/** The processing phase: workers started, n handlers finished, workers stopped. */
export async function processWith<W>(n: number, control: WorkerControl<W>): Promise<void> {
  const countdown = new Countdown(n);
  const workers = await control.start(() => countdown.tick());
  try {
    await countdown.done;
  } finally {
    await control.stop(workers);
  }
}

/** The latency phase on workers of their own (see measureLatency). */
export async function latencyWith<W>(samples: number, control: WorkerControl<W>, enqueueOne: (seq: number) => Promise<void>): Promise<number[]> {
  const hooks: { started?: (seq: number) => void } = {};
  const workers = await control.start((seq) => hooks.started?.(seq));
  try {
    return await measureLatency(samples, enqueueOne, hooks);
  } finally {
    await control.stop(workers);
  }
}

/** Enqueues seqs 0..n-1 in bulk calls of ENQUEUE_BATCH, one after another. */
export async function inBatches(n: number, insert: (seqs: number[]) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < n; start += ENQUEUE_BATCH) {
    await insert(Array.from({ length: Math.min(ENQUEUE_BATCH, n - start) }, (_, i) => start + i));
  }
}
