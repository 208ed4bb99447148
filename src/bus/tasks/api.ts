/**
 * The TaskQueue contract: what the queue promises to workers, the scheduler, the admin surface and
 * the CLI (R7-10: they use this API only). Types only; `SqlTaskQueue` implements it on SQLite and
 * Postgres, and `TaskExecutor`s run handlers on the loop, in a thread or in a process.
 *
 * Priorities: a whole number in -1000..1000, higher runs first (as pg-boss); equal priorities run
 * in enqueue order (ids are UUIDv7, time-ordered).
 */
import type { Database, DataContext, Queryable } from '../../data/index.js';
import type { JsonValue, TaskEnvelope, TaskInput } from './envelope.js';
import type { TaskState } from './lifecycle.js';
import type { RetryPolicy } from './retry.js';
import type { TaskConcurrencyLimit } from './limits-shared.js';
import type { TaskTables } from './schema.js';

/** What happens to tasks still running when the shutdown deadline passes (R7-9). */
export type TaskShutdownPolicy = 'requeue' | 'dead-letter';

export interface TaskQueueConfig {
  /** Tasks the queue may hold in `queued`, `leased`, `running` and `failed-retryable` (default and cap 100,000). */
  readonly maxDepth?: number;
  /** Default and cap 1 MiB. */
  readonly maxPayloadBytes?: number;
  /** Lease (ack deadline) of a taken task (default 60 s); workers renew it every `heartbeatMs` (default 15 s). */
  readonly leaseMs?: number;
  readonly heartbeatMs?: number;
  readonly retry?: RetryPolicy;
  /** Dead-letter queue: entries kept at most this long (default 7 days) and this many (default and cap 10,000; oldest evicted with an event). */
  readonly deadLetterRetainMs?: number;
  readonly deadLetterMaxEntries?: number;
  /** Default `requeue`: back to `queued` with reason `shutdown`, not counted as an attempt. */
  readonly onShutdown?: TaskShutdownPolicy;
}

export interface TaskEnqueueOptions {
  /** -1000..1000, higher first; default 0. */
  readonly priority?: number;
  /**
   * Join the caller's transaction: pass the `tx` of `db.transaction(...)` on the queue's own
   * database; the task exists if and only if that transaction commits.
   */
  readonly tx?: Queryable;
  /** A scheduled enqueue carries its leader's fencing token; checked in the same transaction (StaleFencingToken). */
  readonly fence?: { readonly key: string; readonly token: number };
  readonly ctx?: DataContext;
}

export interface EnqueueResult {
  readonly id: string;
  /** True when the idempotency key was seen within 24 h: nothing enqueued, `id` is the first task's. */
  readonly duplicate: boolean;
}

/** Why a run ended without success, as recorded in the task's history and the dead-letter entry. */
export type TaskFailureReason =
  | 'error' // the handler threw or rejected
  | 'soft-timeout' // the handler ignored its aborted signal past the soft timeout and then failed
  | 'hard-timeout' // the worker's host was recycled
  | 'lease-expired' // no ack or heartbeat before the lease ran out (the worker died or hung)
  | 'permanent' // the handler said no retry will help (PermanentTaskFailure)
  | 'shutdown' // given back or dead-lettered at shutdown
  | 'cancelled'
  | 'max-retries'; // the failure that exhausted max_retries

export interface TaskHistoryEntry {
  readonly at: number;
  readonly state: TaskState;
  readonly reason?: TaskFailureReason;
  /** The error, as `describeReason` prints it (name, code, message), cut to 1,000 characters. */
  readonly detail?: string;
}

export interface TaskRecord {
  readonly queue: string;
  readonly envelope: TaskEnvelope;
  readonly state: TaskState;
  readonly priority: number;
  /** Epoch ms when it may next be leased (run_at, or after a retry delay). */
  readonly runAfter: number;
  /** Epoch ms the current lease ends, while leased or running. */
  readonly leaseUntil: number | null;
  /** The last entries of its history, newest last (at most 50). */
  readonly history: readonly TaskHistoryEntry[];
  /** What its handler returned, once it succeeded (absent when the handler returned nothing). */
  readonly result?: JsonValue;
  /** The last value its handler reported with `progress` (kept after the run ends). */
  readonly progress?: JsonValue;
}

/** A task a worker took: settle it with `settle` before `leaseUntil`, or renew with `heartbeat`. */
export interface LeasedTask {
  readonly queue: string;
  readonly envelope: TaskEnvelope;
  readonly priority: number;
  /** Raised on every lease of this task: a settle or heartbeat with an older token is refused (the lease moved on). */
  readonly leaseToken: number;
  readonly leaseUntil: number;
}

export type TaskOutcome =
  /** `result`: the handler's return value as JSON text, stored with the task (TaskRecord.result). */
  | { readonly kind: 'succeeded'; readonly result?: string }
  | { readonly kind: 'failed'; readonly reason: TaskFailureReason; readonly detail?: string; readonly permanent?: boolean }
  /** Shutdown gave it back unrun or unfinished (R7-9). */
  | { readonly kind: 'released' };

export interface TaskSettlement {
  readonly id: string;
  readonly leaseToken: number;
  readonly outcome: TaskOutcome;
}

/** A running task's latest progress (`TaskContext.progress`), as JSON text, for the lease it was reported under. */
export interface TaskProgressUpdate {
  readonly id: string;
  readonly leaseToken: number;
  readonly progress: string;
}

export interface TaskQueueInfo {
  readonly name: string;
  readonly counts: Readonly<Record<TaskState, number>>;
  /** queued + leased + running + failed-retryable: what `maxDepth` bounds. */
  readonly depth: number;
  readonly deadLetters: number;
  /** Paused: no worker takes its tasks (enqueues are still accepted). */
  readonly paused: boolean;
}

export interface TaskDeadLetter {
  readonly queue: string;
  readonly envelope: TaskEnvelope;
  readonly reason: TaskFailureReason;
  readonly detail?: string;
  readonly at: number;
}

export interface TaskListOptions {
  readonly state?: TaskState;
  /** Default 100, at most 1,000. */
  readonly limit?: number;
  /** Ids after this one (keyset paging). */
  readonly after?: string;
}

export interface TaskQueueEvents {
  /** Every task state change (R7-6). */
  readonly transition?: (event: { queue: string; id: string; from: TaskState; to: TaskState; reason?: TaskFailureReason }) => void;
  /** A dead letter evicted by age or count. */
  readonly deadLetterEvicted?: (event: { queue: string; id: string; cause: 'age' | 'count' }) => void;
}

export interface TaskQueue {
  readonly backend: 'sqlite' | 'postgres';
  /** The database the queue's tables live in (a scheduler writes its entries and fires beside them, in one transaction). */
  readonly database: Database;
  /** The queue's table names (see `table` in the queue's options). */
  readonly tables: TaskTables;
  /** Creates the queue, or returns it when it exists (its config is updated). */
  createQueue(name: string, config?: TaskQueueConfig): Promise<TaskQueueInfo>;
  queues(): Promise<string[]>;
  queueInfo(queue: string): Promise<TaskQueueInfo>;
  enqueue(queue: string, input: TaskInput, options?: TaskEnqueueOptions): Promise<EnqueueResult>;
  /** One transaction for all; results in input order. */
  enqueueMany(queue: string, inputs: readonly TaskInput[], options?: TaskEnqueueOptions): Promise<EnqueueResult[]>;
  /** Up to `max` tasks whose time has come, highest priority first, each `leased` until now + leaseMs. */
  lease(queue: string, max: number, options?: { readonly names?: readonly string[]; readonly ctx?: DataContext }): Promise<LeasedTask[]>;
  /** `leased` → `running` for tasks whose handler started (batched). */
  markRunning(queue: string, tasks: readonly { id: string; leaseToken: number }[]): Promise<void>;
  /** Renews leases; resolves with the ids no longer held (cancelled, expired, re-leased): their handlers should be aborted. */
  heartbeat(queue: string, tasks: readonly { id: string; leaseToken: number }[]): Promise<string[]>;
  /** Acks, failures (retry with backoff or dead-letter) and releases, in one transaction. Stale tokens are skipped. */
  settle(queue: string, settlements: readonly TaskSettlement[]): Promise<void>;
  /** Returns expired leases to `queued` (attempts + 1) or to the DLQ; resolves with how many. */
  expireLeases(queue?: string): Promise<number>;
  /** Stores progress of taken tasks (the last of an id wins); an update whose lease moved on is skipped. */
  reportProgress(queue: string, updates: readonly TaskProgressUpdate[]): Promise<void>;
  get(id: string): Promise<TaskRecord | undefined>;
  list(queue: string, options?: TaskListOptions): Promise<TaskRecord[]>;
  /** Queued or failed-retryable: cancelled at once. Running: cancelled, and its worker's next heartbeat aborts the handler. */
  cancel(id: string): Promise<TaskState>;
  /** A failed-retryable task runs now; a dead-lettered one goes back to `queued`. */
  retry(id: string): Promise<TaskState>;
  deadLetters(queue: string, options?: { readonly limit?: number; readonly after?: string }): Promise<TaskDeadLetter[]>;
  /** Moves dead letters back to `queued` with attempts 0 (all of the queue's, or those ids); resolves with how many. */
  redrive(queue: string, ids?: readonly string[]): Promise<number>;
  /** Stops every pool on every instance taking the queue's tasks (running ones finish); enqueues go on. Resolves false when it was already paused. */
  pause(queue: string): Promise<boolean>;
  /** Undoes `pause` and wakes the pools; resolves false when it was not paused. */
  resume(queue: string): Promise<boolean>;
  /** Deletes the queue's waiting tasks (queued and awaiting a retry; with `deadLetters`, dead letters too); taken ones are left. Resolves with how many. */
  purge(queue: string, options?: { readonly deadLetters?: boolean }): Promise<number>;
  /** Deletes the queue and all its tasks; refused (TaskStateConflict) while tasks are taken, unless `force`. Resolves with the tasks deleted. */
  deleteQueue(queue: string, options?: { readonly force?: boolean }): Promise<number>;
  /** Optional: names of tasks waiting in `queue` (queued or awaiting a retry), at most `limit`: a pool checks its handlers cover them before it starts. */
  pendingTaskNames?(queue: string, limit: number): Promise<string[]>;
  /** Optional: resolves when an enqueue may have made work for `queue`, after `ms`, or when `signal` aborts (without it, worker pools poll). */
  waitForWork?(queue: string, ms: number, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** What a handler gets besides its payload. */
export interface TaskContext {
  readonly task: TaskEnvelope;
  /** Aborted at the soft timeout, on cancel, and at the shutdown deadline. */
  readonly signal: AbortSignal;
  /**
   * Reports how far the run is (a percentage, or any JSON up to 4 Ki characters): stored with the
   * task, where `get` and the admin surface read it, the latest value winning. Writes are coalesced
   * (at most one per task per write the pool makes), so calling it often is cheap. Throws
   * TaskResultInvalid on a value that is not JSON or is too long.
   */
  progress(value: JsonValue): void;
}

export type TaskHandler = (payload: JsonValue, context: TaskContext) => unknown;
export type TaskHandlers = Readonly<Record<string, TaskHandler>>;

/**
 * Where handlers run (R7-5). `thread` (the default) and `process` load `module`, which exports
 * `handlers` (a TaskHandlers record), in a placement host of their own: one host per worker, so a
 * hard timeout can recycle it. `loop` is the opt-in for handlers that only wait on I/O.
 */
export type ExecutorSpec =
  | { readonly placement: 'loop'; readonly handlers: TaskHandlers }
  | {
      readonly placement: 'thread' | 'process';
      readonly module: string | URL;
      /**
       * Tasks one host runs at once (1..64). The worker's tasks go to its host in one frame and
       * their replies come back together, so a short task costs a k-th of the messages; each counts
       * towards `concurrency`, which then takes ceil(concurrency / prefetch) hosts. A hard timeout
       * ends the host, and with it the other tasks running there. Unset, the pool starts
       * `concurrency` hosts and adapts it to task duration: from 1, doubled while tasks are short,
       * up to min(concurrency, 64), halved while they are long (see `stats().prefetch`).
       */
      readonly prefetch?: number;
    };

/** Runs the tasks of one worker: one at a time, or up to `prefetch` at once in a thread or process host. */
export interface TaskExecutor {
  readonly placement: ExecutorSpec['placement'];
  /**
   * Runs the handler named by `task.name`. Aborts its signal at `task.timeout_soft_ms` or when
   * `signal` aborts; at `task.timeout_hard_ms` rejects with TaskHardTimeout (a thread or process
   * host is terminated and a fresh one started). Rejects with UnknownTaskHandler for a name the
   * handlers lack; a non-Error thrown by a handler is wrapped in TaskHandlerFailed. Resolves with
   * the handler's return value as JSON text (undefined when it returned nothing); `progress` hears
   * the run's progress values, as JSON text.
   */
  run(task: TaskEnvelope, signal: AbortSignal, progress?: (json: string) => void): Promise<string | undefined>;
  /**
   * Resolves with the handler names once the handlers are loaded (a `thread` or `process` host has
   * imported its module); rejects with the cause when the module is unusable.
   */
  ready(): Promise<readonly string[]>;
  close(): Promise<void>;
}

/** A pool of TaskWorker actors for one queue, under a dynamic supervisor (S7-10: at most 64 workers per group). */
export interface TaskWorkersOptions {
  readonly queue: string;
  readonly executor: ExecutorSpec;
  /** Tasks run at once for this queue: default 4, at most 64; one worker (and host) each, or per `executor.prefetch` tasks. */
  readonly concurrency?: number;
  /** Tasks leased per fetch: default `concurrency`, at most 1,000. */
  readonly batch?: number;
  /** At most `max` task starts per `perMs` (token bucket); default none. */
  readonly rateLimit?: { readonly max: number; readonly perMs: number };
  /** Only tasks with these names; default all. */
  readonly names?: readonly string[];
  /** Poll interval when no wake-up arrives (default 1,000 ms). */
  readonly pollMs?: number;
  /** Shared by several pools: tasks running at once across all of them (a `TaskConcurrencyLimit`). */
  readonly global?: TaskConcurrencyLimit;
  /** R7-9: how long a stop by the pool's supervisor lets running tasks finish (default 30,000 ms). */
  readonly drainMs?: number;
  /** Lease renewal interval; default the queue's `heartbeatMs` when the queue tells it (SqlTaskQueue), else 15,000 ms. */
  readonly heartbeatMs?: number;
}

export interface TaskWorkersStats {
  readonly queue: string;
  readonly workers: number;
  /** Tasks it runs at once at most now (TaskWorkerPool.setConcurrency), and the `concurrency` it started with, the ceiling. */
  readonly concurrency: number;
  readonly maxConcurrency: number;
  /** Hosts of the pool's workers booting now (a worker gets tasks once its host is up). */
  readonly booting: number;
  /** Tasks the fetcher hands one worker's host at once now: `executor.prefetch`, or where unset, as adapted. */
  readonly prefetch: number;
  readonly running: number;
  readonly succeeded: number;
  readonly failed: number;
  /** The queue's depth and dead letters at the pool's last look (every 5 s), once it looked. */
  readonly depth?: number;
  readonly deadLetters?: number;
}

export interface TaskWorkers {
  stats(): TaskWorkersStats;
  /** R7-9: stop taking tasks, drain in-flight ones until `deadlineMs`, then abort and give back the rest. */
  stop(deadlineMs?: number): Promise<void>;
}
