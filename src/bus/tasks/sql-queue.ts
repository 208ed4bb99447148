/**
 * The durable task queue in a SQL `Database`, written once for SQLite and Postgres (statement text
 * as in the streams: written for Postgres, casts and row locks stripped for SQLite). Tables in
 * schema.ts; enqueues are group-committed (enqueue-batch.ts) unless they join the caller's
 * transaction or carry a fence; leases, heartbeats and settlements are one statement or one
 * transaction per batch (lease-ops.ts, settle-ops.ts); cancel, retry and the rest in admin-ops.ts.
 * Times are ms since the epoch on the injected clock, never the database server's `now()`.
 */
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../../actors/index.js';
import { nearestKey } from '../../actors/option-keys.js';
import type { DataContext, Database, Queryable } from '../../data/index.js';
import { carrierOf, RuntimeTracer, type Logger } from '../../telemetry/index.js';
import { checkFence } from '../leases/fence.js';
import { dialect } from '../streams/schema.js';
import { GroupCommit, type Outcome } from '../streams/group-commit.js';
import { StoreLifecycle } from '../store/lifecycle.js';
import { InvalidBusOption } from '../errors.js';
import { AdminOps } from './admin-ops.js';
import type {
  EnqueueResult,
  LeasedTask,
  TaskDeadLetter,
  TaskEnqueueOptions,
  TaskListOptions,
  TaskQueue,
  TaskQueueConfig,
  TaskQueueEvents,
  TaskQueueInfo,
  TaskProgressUpdate,
  TaskRecord,
  TaskSettlement,
} from './api.js';
import { createEnvelope, TASK_DEFAULTS, type TaskInput } from './envelope.js';
import { writeEnqueueBatch, type EnqueueContext, type EnqueueItem } from './enqueue-batch.js';
import { TaskQueueClosed, TaskQueueNotFound } from './errors.js';
import { deleteQueue, purgeTasks, PURGEABLE, setPaused } from './queue-ops.js';
import { leaseTasks, markRunning, renewLeases, type Change } from './lease-ops.js';
import type { TaskState } from './lifecycle.js';
import { TaskTelemetry } from './metrics.js';
import { TaskSpanName } from './spans.js';
import { checkQueueName, resolveQueueConfig, TASK_QUEUE_LIMITS, whole, type ResolvedTaskQueueConfig } from './queue-config.js';
import { checkTaskPrefix, createTaskTables, DEFAULT_TASK_PREFIX, taskTablesOf, type TaskTables } from './schema.js';
import { checkSettlementResults, writeProgress } from './result-ops.js';
import { ackRows, enforceDeadLetterCaps, expireRows, settleRows, type SettleContext, type SettleResult } from './settle-ops.js';

export interface SqlTaskQueueOptions {
  /** Table prefix (default `molo_task`); several queues stores may share a database under different prefixes. */
  readonly table?: string;
  /** Enqueue times, run_at, leases, retry delays and retention read it. Default: the system clock. */
  readonly clock?: Clock;
  /** Jitter of retry delays: a number in [0, 1) as Math.random (the default). */
  readonly random?: () => number;
  readonly events?: TaskQueueEvents;
  /** Prometheus registry for the task metrics; none: no metrics. */
  readonly metrics?: Registry;
  /** Each state change is logged at debug. */
  readonly logger?: Logger;
  /** Enqueues one group commit takes at most (default 512; 1..4,096). */
  readonly enqueueBatch?: number;
  /** Succeeded and cancelled tasks stay readable this long before the sweep deletes them (default 1 h; 0..7 days). */
  readonly completedRetainMs?: number;
  /** Close the database on `close()` (set when the queue opened it). */
  readonly ownsDatabase?: boolean;
}

interface QueuedEnqueue extends EnqueueItem {
  readonly ctx?: DataContext;
}

const MAX_PRIORITY = 1_000;
const SWEEP_INTERVAL_MS = 10_000;
const EXPIRE_BATCH = 1_000;

export class SqlTaskQueue implements TaskQueue {
  readonly backend: 'sqlite' | 'postgres';
  readonly tables: TaskTables;
  readonly telemetry: TaskTelemetry;
  readonly #db: Database;
  readonly #options: SqlTaskQueueOptions;
  readonly #clock: Clock;
  readonly #ops: SettleContext;
  readonly #enqueueContext: EnqueueContext;
  readonly #enqueuer: GroupCommit<QueuedEnqueue, EnqueueResult>;
  readonly #life: StoreLifecycle;
  readonly #wakeIds = new Map<string, number>();
  readonly #configs = new Map<string, ResolvedTaskQueueConfig>();
  readonly #admin: AdminOps;
  readonly #completedRetainMs: number;
  readonly #tracer = new RuntimeTracer();
  #sweptAt = Number.NEGATIVE_INFINITY;

  constructor(db: Database, options: SqlTaskQueueOptions = {}) {
    this.#db = db;
    this.#options = options;
    this.backend = db.backend;
    const prefix = checkTaskPrefix(options.table ?? DEFAULT_TASK_PREFIX);
    this.tables = taskTablesOf(prefix);
    this.#clock = options.clock ?? systemClock;
    const sql = dialect(db.backend);
    this.#ops = { backend: db.backend, tables: this.tables, sql, random: options.random ?? Math.random };
    this.#life = new StoreLifecycle(db, { prefix, clock: this.#clock, ownsDatabase: options.ownsDatabase, closedError: () => new TaskQueueClosed() });
    this.#enqueueContext = {
      tables: this.tables,
      sql,
      notify: this.#life.notifyChannel === undefined ? undefined : `SELECT pg_notify('${this.#life.notifyChannel}', '')`,
      idempotencyWindowMs: TASK_DEFAULTS.idempotencyWindowMs,
    };
    this.#completedRetainMs = whole('completedRetainMs', options.completedRetainMs, 60 * 60 * 1_000, 0, 7 * 24 * 60 * 60 * 1_000);
    this.telemetry = new TaskTelemetry({ metrics: options.metrics, logger: options.logger, events: options.events });
    this.#enqueuer = new GroupCommit({
      run: (items) => this.#writeEnqueues(items),
      maxBatch: whole('enqueueBatch', options.enqueueBatch, 512, 1, 4_096),
      maxQueued: 100_000,
      capName: 'tasks.maxEnqueueQueue',
    });
    this.#admin = new AdminOps(db, this.#ops, () => this.#now(), (changes) => this.#report(changes));
  }

  get database(): Database {
    return this.#db;
  }

  /** Creates the tables if missing and, on Postgres, listens for enqueue wake-ups. */
  async open(): Promise<this> {
    await createTaskTables(this.#db, checkTaskPrefix(this.#options.table ?? DEFAULT_TASK_PREFIX));
    await this.#life.listen();
    return this;
  }

  // ---- queues ----------------------------------------------------------------------------------

  async createQueue(name: string, config?: TaskQueueConfig): Promise<TaskQueueInfo> {
    this.#open();
    checkQueueName(name);
    const resolved = resolveQueueConfig(config);
    const t = this.tables;
    const sql = this.#ops.sql;
    await this.#db.transaction(async (tx) => {
      const exists = await tx.query(sql(`SELECT name FROM ${t.queues} WHERE name = $1::text FOR UPDATE`), [name]);
      if (exists.rows.length > 0) {
        await tx.query(sql(`UPDATE ${t.queues} SET config = $2::text WHERE name = $1::text`), [name, JSON.stringify(resolved)]);
        return;
      }
      const count = Number((await tx.query(`SELECT count(*) AS n FROM ${t.queues}`)).rows[0]!.n);
      if (count >= TASK_QUEUE_LIMITS.maxQueues) throw new InvalidBusOption('tasks.maxQueues', `a store holds at most ${TASK_QUEUE_LIMITS.maxQueues} queues`);
      await tx.query(sql(`INSERT INTO ${t.queues} (name, config, created_at) VALUES ($1::text, $2::text, $3::int8) ON CONFLICT (name) DO NOTHING`), [
        name,
        JSON.stringify(resolved),
        this.#now(),
      ]);
    });
    this.#configs.set(name, resolved);
    return this.queueInfo(name);
  }

  async queues(): Promise<string[]> {
    this.#open();
    const { rows } = await this.#db.query(`SELECT name FROM ${this.tables.queues} ORDER BY name`);
    return rows.map((row) => String(row.name));
  }

  async queueInfo(queue: string): Promise<TaskQueueInfo> {
    this.#open();
    await this.#config(queue);
    const info = await this.#admin.queueInfo(queue);
    this.telemetry.depth.set(queue, info.depth);
    this.telemetry.deadLetters.set(queue, info.deadLetters);
    return info;
  }

  async pause(queue: string): Promise<boolean> {
    this.#open();
    await this.#config(queue);
    return setPaused(this.#db, this.#ops, queue, true, this.#now());
  }

  async resume(queue: string): Promise<boolean> {
    this.#open();
    await this.#config(queue);
    const changed = await setPaused(this.#db, this.#ops, queue, false, this.#now());
    if (changed) await this.#wakeEverywhere(queue);
    return changed;
  }

  async purge(queue: string, options: { readonly deadLetters?: boolean } = {}): Promise<number> {
    this.#open();
    await this.#config(queue);
    const purged = await purgeTasks(this.#db, this.#ops, queue, options.deadLetters === true ? [...PURGEABLE, 'dead-lettered'] : PURGEABLE);
    await this.queueInfo(queue);
    return purged;
  }

  async deleteQueue(queue: string, options: { readonly force?: boolean } = {}): Promise<number> {
    this.#open();
    await this.#config(queue);
    const deleted = await deleteQueue(this.#db, this.#ops, queue, options.force === true);
    this.#configs.delete(queue);
    this.telemetry.depth.set(queue, 0);
    this.telemetry.deadLetters.set(queue, 0);
    return deleted;
  }

  pendingTaskNames(queue: string, limit: number): Promise<string[]> {
    this.#open();
    return this.#admin.pendingTaskNames(queue, limit);
  }

  /** The queue's resolved config (cached; read from its row on first use). */
  async config(queue: string): Promise<ResolvedTaskQueueConfig> {
    this.#open();
    return this.#config(queue);
  }

  async #config(queue: string): Promise<ResolvedTaskQueueConfig> {
    checkQueueName(queue);
    const cached = this.#configs.get(queue);
    if (cached !== undefined) return cached;
    const { rows } = await this.#db.query(this.#ops.sql(`SELECT config FROM ${this.tables.queues} WHERE name = $1::text`), [queue]);
    if (rows.length === 0) throw new TaskQueueNotFound(queue, nearestKey(queue, await this.queues()));
    const config = JSON.parse(String(rows[0]!.config)) as ResolvedTaskQueueConfig;
    this.#configs.set(queue, config);
    return config;
  }

  // ---- enqueue ---------------------------------------------------------------------------------

  async enqueue(queue: string, input: TaskInput, options: TaskEnqueueOptions = {}): Promise<EnqueueResult> {
    return (await this.#enqueue(queue, [input], options, true))[0]!;
  }

  async enqueueMany(queue: string, inputs: readonly TaskInput[], options: TaskEnqueueOptions = {}): Promise<EnqueueResult[]> {
    if (!Array.isArray(inputs)) throw new InvalidBusOption('inputs', 'must be an array');
    if (inputs.length > TASK_QUEUE_LIMITS.maxBatch) throw new InvalidBusOption('tasks.maxBatch', `enqueueMany takes at most ${TASK_QUEUE_LIMITS.maxBatch} tasks, got ${inputs.length}`);
    return this.#enqueue(queue, inputs, options, false);
  }

  async #enqueue(queue: string, inputs: readonly TaskInput[], options: TaskEnqueueOptions, single: boolean): Promise<EnqueueResult[]> {
    this.#open();
    const config = await this.#config(queue);
    const priority = options.priority ?? 0;
    if (!Number.isInteger(priority) || Math.abs(priority) > MAX_PRIORITY) throw new InvalidBusOption('priority', `must be an integer in -${MAX_PRIORITY}..${MAX_PRIORITY}`);
    if (inputs.length === 0) return [];
    // One span per enqueue (a batch's tasks share it); its context goes into each envelope, so a run is its child.
    const span = this.#tracer.startSpan(TaskSpanName.enqueue, { 'molo.task.queue': queue, 'molo.task.name': inputs[0]?.name, 'molo.task.count': inputs.length });
    try {
      const results = await this.#enqueueTraced(queue, inputs, options, single, config, priority, carrierOf(span));
      span?.end(undefined, single ? { 'molo.task.id': results[0]?.id, 'molo.task.duplicate': results[0]?.duplicate } : undefined);
      return results;
    } catch (error) {
      span?.end(error);
      throw error;
    }
  }

  async #enqueueTraced(
    queue: string,
    inputs: readonly TaskInput[],
    options: TaskEnqueueOptions,
    single: boolean,
    config: ResolvedTaskQueueConfig,
    priority: number,
    trace: ReturnType<typeof carrierOf>,
  ): Promise<EnqueueResult[]> {
    const items = inputs.map((input) => ({ queue, priority, envelope: createEnvelope(input, { clock: this.#clock, maxPayloadBytes: config.maxPayloadBytes, trace }) }));
    const write = async (tx: Queryable): Promise<Outcome<EnqueueResult>[]> => {
      if (options.fence !== undefined) await checkFence(tx, options.fence.key, options.fence.token);
      const written = await writeEnqueueBatch(tx, this.#enqueueContext, items, this.#now());
      // All or nothing: the first failure is thrown, which rolls back a transaction of ours (the caller's decides for itself).
      const failed = written.find((outcome) => !outcome.ok);
      if (failed !== undefined && !failed.ok) throw failed.error;
      return written;
    };
    let outcomes: Outcome<EnqueueResult>[];
    if (options.tx !== undefined) outcomes = await write(options.tx);
    else if (single && options.fence === undefined) return [await this.#enqueuer.submit({ ...items[0]!, ctx: options.ctx })];
    else outcomes = await this.#db.transaction(write, { ctx: options.ctx });
    if (options.tx === undefined) this.#wake(queue);
    return outcomes.map((outcome) => (outcome as { value: EnqueueResult }).value);
  }

  async #writeEnqueues(items: readonly QueuedEnqueue[]): Promise<readonly Outcome<EnqueueResult>[]> {
    const outcomes = await this.#db.transaction((tx) => writeEnqueueBatch(tx, this.#enqueueContext, items, this.#now()), { ctx: items[0]?.ctx });
    for (const queue of new Set(items.map((item) => item.queue))) this.#wake(queue);
    return outcomes;
  }

  // ---- workers ---------------------------------------------------------------------------------

  async lease(queue: string, max: number, options: { readonly names?: readonly string[]; readonly ctx?: DataContext } = {}): Promise<LeasedTask[]> {
    this.#open();
    const config = await this.#config(queue);
    const count = whole('lease.max', max, 1, 1, TASK_QUEUE_LIMITS.maxBatch);
    const { tasks, changes } = await leaseTasks(this.#db, this.#ops, queue, count, options.names, this.#now(), config.leaseMs);
    this.#report(changes);
    return tasks;
  }

  async markRunning(queue: string, tasks: readonly { id: string; leaseToken: number }[]): Promise<void> {
    this.#open();
    await this.#config(queue);
    if (tasks.length === 0) return;
    this.#report(await markRunning(this.#db, this.#ops, queue, tasks, this.#now()));
  }

  async heartbeat(queue: string, tasks: readonly { id: string; leaseToken: number }[]): Promise<string[]> {
    this.#open();
    const config = await this.#config(queue);
    if (tasks.length === 0) return [];
    return renewLeases(this.#db, this.#ops, queue, tasks, this.#now() + config.leaseMs);
  }

  async reportProgress(queue: string, updates: readonly TaskProgressUpdate[]): Promise<void> {
    this.#open();
    await this.#config(queue);
    if (updates.length > TASK_QUEUE_LIMITS.maxBatch) throw new InvalidBusOption('tasks.maxBatch', `reportProgress takes at most ${TASK_QUEUE_LIMITS.maxBatch} updates`);
    await writeProgress(this.#db, this.#ops, queue, updates);
  }

  async settle(queue: string, settlements: readonly TaskSettlement[]): Promise<void> {
    this.#open();
    const config = await this.#config(queue);
    if (settlements.length === 0) return;
    if (settlements.length > TASK_QUEUE_LIMITS.maxBatch) throw new InvalidBusOption('tasks.maxBatch', `settle takes at most ${TASK_QUEUE_LIMITS.maxBatch} tasks`);
    checkSettlementResults(settlements);
    const now = this.#now();
    const acks = settlements.filter((s) => s.outcome.kind === 'succeeded');
    const rest = acks.length === settlements.length ? [] : settlements.filter((s) => s.outcome.kind !== 'succeeded');
    if (acks.length > 0) this.#report(await ackRows(this.#db, this.#ops, queue, acks.map(ackOf), now));
    if (rest.length === 0) return;
    const [result, evicted] = await this.#db.transaction(async (tx) => {
      const settled = await settleRows(tx, this.#ops, queue, config, rest, now);
      return [settled, await this.#enforceCaps(tx, settled, now)] as const;
    });
    this.#report(result.changes);
    for (const { queue: q, id, cause } of evicted) this.telemetry.evicted(q, id, cause);
    if (rest.some((s) => s.outcome.kind === 'released')) this.#wake(queue);
  }

  async expireLeases(queue?: string): Promise<number> {
    this.#open();
    if (queue !== undefined) await this.#config(queue);
    const now = this.#now();
    const [result, evicted] = await this.#db.transaction(async (tx) => {
      const expired = await expireRows(tx, this.#ops, queue, now, EXPIRE_BATCH);
      return [expired, await this.#enforceCaps(tx, expired, now)] as const;
    });
    this.#report(result.changes);
    const perQueue = new Map<string, number>();
    for (const change of result.changes) if (change.from !== 'failed-permanent') perQueue.set(change.queue, (perQueue.get(change.queue) ?? 0) + 1);
    for (const [q, count] of perQueue) {
      this.telemetry.expired(q, count);
      this.#wake(q);
    }
    for (const { queue: q, id, cause } of evicted) this.telemetry.evicted(q, id, cause);
    if (now - this.#sweptAt >= SWEEP_INTERVAL_MS) {
      this.#sweptAt = now;
      for (const { queue: q, id, cause } of await this.#admin.sweep(now, this.#completedRetainMs, (name) => this.#config(name))) this.telemetry.evicted(q, id, cause);
    }
    return perQueue.size === 0 ? 0 : [...perQueue.values()].reduce((a, b) => a + b, 0);
  }

  async #enforceCaps(tx: Queryable, result: SettleResult, now: number): Promise<{ queue: string; id: string; cause: 'age' | 'count' }[]> {
    const evicted: { queue: string; id: string; cause: 'age' | 'count' }[] = [];
    for (const q of result.deadLettered) {
      for (const entry of await enforceDeadLetterCaps(tx, this.#ops, q, await this.#config(q), now)) evicted.push({ queue: q, ...entry });
    }
    return evicted;
  }

  /** Resolves when an enqueue (here, or on Postgres anywhere) may have made work for `queue`, after `ms`, or when `signal` aborts. */
  waitForWork(queue: string, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#life.closed) return Promise.resolve();
    return this.#life.wakeup.wait(this.#wakeId(queue), ms, signal);
  }

  // ---- inspection and operations -----------------------------------------------------------------

  get(id: string): Promise<TaskRecord | undefined> {
    this.#open();
    return this.#admin.get(id);
  }

  async list(queue: string, options: TaskListOptions = {}): Promise<TaskRecord[]> {
    this.#open();
    await this.#config(queue);
    return this.#admin.list(queue, options);
  }

  async cancel(id: string): Promise<TaskState> {
    this.#open();
    return this.#admin.cancel(id);
  }

  async retry(id: string): Promise<TaskState> {
    this.#open();
    const { state, queue } = await this.#admin.retry(id);
    this.#wake(queue);
    return state;
  }

  async deadLetters(queue: string, options: { readonly limit?: number; readonly after?: string } = {}): Promise<TaskDeadLetter[]> {
    this.#open();
    await this.#config(queue);
    return this.#admin.deadLetters(queue, options);
  }

  async redrive(queue: string, ids?: readonly string[]): Promise<number> {
    this.#open();
    await this.#config(queue);
    const count = await this.#admin.redrive(queue, ids);
    if (count > 0) this.#wake(queue);
    return count;
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  get closed(): boolean {
    return this.#life.closed;
  }

  close(): Promise<void> {
    return this.#life.close(() => this.#enqueuer.drain());
  }

  #open(): void {
    this.#life.check();
  }

  #now(): number {
    return Math.floor(this.#clock.wallNow());
  }

  #wakeId(queue: string): number {
    let id = this.#wakeIds.get(queue);
    if (id === undefined) this.#wakeIds.set(queue, (id = this.#wakeIds.size + 1));
    return id;
  }

  #wake(queue: string): void {
    const id = this.#wakeIds.get(queue);
    if (id !== undefined) this.#life.wakeup.wake(id);
  }

  /** Wakes local pools, and on Postgres the other instances' too (the NOTIFY an enqueue sends). */
  async #wakeEverywhere(queue: string): Promise<void> {
    this.#wake(queue);
    if (this.#enqueueContext.notify !== undefined) await this.#db.query(this.#enqueueContext.notify);
  }

  #report(changes: readonly Change[]): void {
    for (const change of changes) this.telemetry.transition(change.queue, change.id, change.from, change.to, change.reason);
  }
}

/** A succeeded settlement as an ack, with its result when it has one. */
function ackOf(settlement: TaskSettlement): { id: string; leaseToken: number; result?: string } {
  const { outcome } = settlement;
  const result = outcome.kind === 'succeeded' ? outcome.result : undefined;
  return result === undefined ? { id: settlement.id, leaseToken: settlement.leaseToken } : { id: settlement.id, leaseToken: settlement.leaseToken, result };
}
