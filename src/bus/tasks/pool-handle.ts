/**
 * What a pool's fetcher and workers share: the resolved options, the current fetcher (workers
 * announce themselves to it and report their runs straight to it, so a fetcher draining in its
 * `terminate` still hears them), and the pool's counts.
 */
import type { Ref } from '../../actors/index.js';
import { InvalidBusOption, refuseUnknownBusOptions } from '../errors.js';
import type { ExecutorSpec, LeasedTask, TaskQueue, TaskWorkersOptions, TaskWorkersStats } from './api.js';
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
  | { readonly kind: 'task-progress'; readonly task: LeasedTask; readonly json: string };

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
  /** Tasks a worker (its host) runs at once: the executor's `prefetch`, 1 on the loop. */
  readonly prefetch: number;
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
  return {
    queue: checkQueueName(options.queue),
    executor,
    concurrency,
    prefetch,
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

  constructor(
    readonly queue: TaskQueue,
    readonly options: ResolvedWorkersOptions,
  ) {
    this.drainMs = options.drainMs;
  }

  get executor(): ExecutorSpec {
    return this.options.executor;
  }

  report(report: TaskWorkerReport): void {
    this.listener?.(report);
  }

  stats(): TaskWorkersStats {
    const stats = { queue: this.options.queue, workers: this.workerCount, running: this.counts.running, succeeded: this.counts.succeeded, failed: this.counts.failed };
    return this.info === undefined ? stats : { ...stats, depth: this.info.depth, deadLetters: this.info.deadLetters };
  }
}
