/**
 * What a pool's fetcher and workers share: the resolved options, the current fetcher (workers
 * announce themselves to it and report their runs straight to it, so a fetcher draining in its
 * `terminate` still hears them), and the pool's counts.
 */
import type { Ref } from '../../actors/index.js';
import { InvalidBusOption, refuseUnknownBusOptions } from '../errors.js';
import type { ExecutorSpec, LeasedTask, TaskQueue, TaskWorkersOptions, TaskWorkersStats } from './api.js';
import { AdaptivePrefetch } from './adaptive-prefetch.js';
import { TaskConcurrencyLimit, TaskRateLimit } from './limits-shared.js';
import { checkQueueName, whole } from './queue-config.js';

/** What a worker tells the fetcher. */
export type TaskWorkerReport =
  | { readonly kind: 'task-worker-join'; readonly worker: Ref }
  | {
      readonly kind: 'task-done';
      readonly worker: Ref;
      readonly task: LeasedTask;
      readonly ok: boolean;
      readonly error?: unknown;
      readonly elapsedMs: number;
      /** The handler's return value as JSON text. */
      readonly result?: string | undefined;
    }
  /** The latest progress of a running task, as JSON text. */
  | { readonly kind: 'task-progress'; readonly task: LeasedTask; readonly json: string }
  /** The worker's host is up (its module loaded): it may be given tasks. */
  | { readonly kind: 'task-worker-up'; readonly worker: Ref };

export const TASK_WORKER_LIMITS = Object.freeze({
  /** S7-10: workers per group (one pool is one group). */
  maxWorkersPerGroup: 64,
  /** S7-10: groups (pools) per supervisor. */
  maxGroupsPerSupervisor: 32,
  maxBatch: 1_000,
  /** Tasks one thread or process host runs at once. */
  maxPrefetch: 64,
});

export const TASK_WORKER_DEFAULTS = Object.freeze({ concurrency: 4, pollMs: 1_000, drainMs: 30_000 });

export interface ResolvedWorkersOptions {
  readonly queue: string;
  readonly executor: ExecutorSpec;
  readonly concurrency: number;
  /** Tasks a worker (its host) runs at once: the executor's `prefetch`, 1 on the loop; where it adapts, its start (1). */
  readonly prefetch: number;
  /** `executor.prefetch` unset on a thread or process pool: the fetcher adapts it to task duration (adaptive-prefetch.ts). */
  readonly adaptivePrefetch: boolean;
  /** The most a worker's host is asked to run at once: `prefetch`, or where it adapts, min(concurrency, maxPrefetch). */
  readonly prefetchCap: number;
  /** Workers started: ceil(concurrency / prefetch). */
  readonly workers: number;
  readonly batch: number;
  readonly pollMs: number;
  readonly drainMs: number;
  readonly names: readonly string[] | undefined;
  readonly rate: TaskRateLimit | undefined;
  readonly global: TaskConcurrencyLimit | undefined;
  readonly heartbeatMs: number | undefined;
}

const WORKERS_OPTION_KEYS: readonly (keyof TaskWorkersOptions)[] = ['queue', 'executor', 'concurrency', 'batch', 'rateLimit', 'names', 'pollMs', 'global', 'drainMs', 'heartbeatMs'];

export function resolveWorkersOptions(options: TaskWorkersOptions): ResolvedWorkersOptions {
  if (options === null || typeof options !== 'object') throw new InvalidBusOption('workers', 'options must be an object');
  refuseUnknownBusOptions('workers', options, WORKERS_OPTION_KEYS);
  const executor = options.executor;
  if (executor === null || typeof executor !== 'object' || !['loop', 'thread', 'process'].includes(executor.placement)) {
    throw new InvalidBusOption('executor.placement', "must be 'loop', 'thread' or 'process'");
  }
  const concurrency = options.concurrency ?? TASK_WORKER_DEFAULTS.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > TASK_WORKER_LIMITS.maxWorkersPerGroup) {
    throw new InvalidBusOption('tasks.maxWorkersPerGroup', `concurrency must be an integer in 1..${TASK_WORKER_LIMITS.maxWorkersPerGroup} (S7-10), got ${String(concurrency)}`);
  }
  if (options.global !== undefined && !(options.global instanceof TaskConcurrencyLimit)) throw new InvalidBusOption('global', 'must be a TaskConcurrencyLimit');
  const prefetch = executor.placement === 'loop' ? 1 : whole('executor.prefetch', executor.prefetch, 1, 1, TASK_WORKER_LIMITS.maxPrefetch);
  const adaptivePrefetch = executor.placement !== 'loop' && executor.prefetch === undefined;
  return {
    queue: checkQueueName(options.queue),
    executor,
    concurrency,
    prefetch,
    adaptivePrefetch,
    // More than `concurrency` could never be in flight at once anyway.
    prefetchCap: adaptivePrefetch ? Math.min(concurrency, TASK_WORKER_LIMITS.maxPrefetch) : prefetch,
    workers: Math.ceil(concurrency / prefetch),
    batch: whole('workers.batch', options.batch, concurrency, 1, TASK_WORKER_LIMITS.maxBatch),
    pollMs: whole('workers.pollMs', options.pollMs, TASK_WORKER_DEFAULTS.pollMs, 10, 60_000),
    drainMs: whole('workers.drainMs', options.drainMs, TASK_WORKER_DEFAULTS.drainMs, 0, 600_000),
    names: options.names,
    rate: options.rateLimit === undefined ? undefined : new TaskRateLimit(options.rateLimit.max, options.rateLimit.perMs),
    global: options.global,
    heartbeatMs: options.heartbeatMs === undefined ? undefined : whole('workers.heartbeatMs', options.heartbeatMs, 0, 10, 3_600_000),
  };
}

export class TaskPoolHandle {
  fetcher: Ref | undefined;
  workers: Ref | undefined;
  /** The fetcher's report handler while one runs. */
  listener: ((report: TaskWorkerReport) => void) | undefined;
  /** Set by `stop(deadline)` before the pool supervisor is stopped. */
  drainMs: number;
  readonly counts = { running: 0, succeeded: 0, failed: 0 };
  /** The queue at the fetcher's last look. */
  info: { readonly depth: number; readonly deadLetters: number } | undefined;
  workerCount = 0;
  /**
   * Tasks in flight at most now: `concurrency` at start, lowered or raised back by an operator
   * (TaskWorkerPool.setConcurrency), never above it: the hosts were started for that many.
   */
  concurrency: number;
  /** Hosts of this pool's workers booting now (waiting for the boot gate included). */
  booting = 0;
  /** Workers whose host is up (by ref text): the fetcher gives tasks to these only. */
  readonly up = new Set<string>();
  /** Settles with the pool's first host boot of this start: up, or failed (rejects with the cause). */
  firstBoot!: Promise<void>;
  /** How the first host boot of this start went. */
  firstOutcome: 'pending' | 'up' | 'failed' = 'pending';
  #settleFirst: ((error?: unknown) => void) | undefined;
  readonly #adaptive: AdaptivePrefetch | undefined;

  constructor(
    readonly queue: TaskQueue,
    readonly options: ResolvedWorkersOptions,
  ) {
    this.drainMs = options.drainMs;
    this.concurrency = options.concurrency;
    this.#adaptive = options.adaptivePrefetch ? new AdaptivePrefetch(options.prefetchCap) : undefined;
    this.beginStart();
  }

  /** The workers' supervisor (re)starts: its start waits for a first host of its own. */
  beginStart(): void {
    this.up.clear();
    this.firstOutcome = 'pending';
    this.firstBoot = new Promise<void>((resolve, reject) => {
      this.#settleFirst = (error) => (error === undefined ? resolve() : reject(error as Error));
    });
    // Observed by the pool's start; never an unhandled rejection when nobody waits.
    this.firstBoot.catch(() => undefined);
  }

  /** Tasks the fetcher hands one worker at once now. */
  get prefetch(): number {
    return this.#adaptive?.value ?? this.options.prefetch;
  }

  /** A task took `elapsedMs` in a worker: an adaptive prefetch learns from it. */
  observe(elapsedMs: number): void {
    this.#adaptive?.observe(elapsedMs);
  }

  /** A worker's host boot settled; the first one settles `firstBoot`. True when it was the first. */
  hostBooted(worker: Ref, ok: boolean, error?: unknown): boolean {
    if (ok) this.up.add(worker.toString());
    const settle = this.#settleFirst;
    if (settle === undefined) return false;
    this.#settleFirst = undefined;
    this.firstOutcome = ok ? 'up' : 'failed';
    settle(ok ? undefined : (error ?? new Error('host failed to boot')));
    return true;
  }

  get executor(): ExecutorSpec {
    return this.options.executor;
  }

  report(report: TaskWorkerReport): void {
    this.listener?.(report);
  }

  stats(): TaskWorkersStats {
    const stats = {
      queue: this.options.queue,
      workers: this.workerCount,
      concurrency: this.concurrency,
      maxConcurrency: this.options.concurrency,
      booting: this.booting,
      prefetch: this.prefetch,
      running: this.counts.running,
      succeeded: this.counts.succeeded,
      failed: this.counts.failed,
    };
    return this.info === undefined ? stats : { ...stats, depth: this.info.depth, deadLetters: this.info.deadLetters };
  }
}
