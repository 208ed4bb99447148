/**
 * `openScheduler`: the scheduler service. Entries live in a table of the task queue's database and
 * survive restarts; `add`, `update`, `remove`, `get` and `list` work on any node (they write the
 * table, leader or not), and the one leading scheduler actor of the deployment fires what is due
 * (see scheduler-actor.ts for the fencing).
 */
import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { ActorSystem, Ref } from '../../actors/index.js';
import { GenServer } from '../../behaviours/gen-server.js';
import type { Database } from '../../data/index.js';
import { openKv, type KvStore, type SqlKvStore } from '../../data/kv/index.js';
import { InvalidBusOption } from '../errors.js';
import { createFenceTable } from '../leases/fence.js';
import type { TaskQueue } from '../tasks/api.js';
import {
  checkQueueName,
  checkScheduleId,
  checkTask,
  newScheduleId,
  resolveSchedule,
  type ScheduleEntry,
  type ScheduleEntryInput,
  type ScheduleEntryPatch,
} from './entry.js';
import { InvalidSchedule, ScheduleExists, ScheduleLimitReached, ScheduleNotFound, SchedulerClosed } from './errors.js';
import { emptySchedulerCounts, schedulerMetrics } from './metrics.js';
import { firstDue, SCHEDULER_DEFAULTS } from './schedule.js';
import { SchedulerServer, type SchedulerStatus } from './scheduler-actor.js';
import { DEFAULT_SCHEDULE_TABLE, ScheduleStore } from './store.js';

export interface SchedulerOptions {
  /** The task queue's database: a fire's enqueue and its bookkeeping commit in one transaction on it. */
  readonly db: Database;
  readonly queue: TaskQueue;
  /** The scheduler's name: its lease (`molo:lease:<name>`) and fence key. Default `scheduler`. */
  readonly name?: string;
  /** Where the lease lives (a SQL KV store shared by the deployment); default a store on `db` (table `molo_scheduler_lease`). */
  readonly leaseStore?: KvStore;
  /** Lease timings (S7-5 defaults: 10 s TTL, 3 s renewal; see LeaderLeaseOptions). */
  readonly lease?: { readonly holder?: string; readonly ttlMs?: number; readonly renewEveryMs?: number; readonly safetyMarginMs?: number };
  /** Default 1,000 ms (S7-5); 100..60,000. */
  readonly tickMs?: number;
  /** Due entries fired per tick at most (default 100, at most 1,000); the rest on the next tick. */
  readonly batch?: number;
  /** Entries the table may hold (default 10,000, at most 100,000). */
  readonly maxSchedules?: number;
  /** A fire seen this late is still on time (default 5,000 ms; 0..3,600,000). */
  readonly misfireGraceMs?: number;
  /** Default `molo_schedules`. */
  readonly table?: string;
  /** Prometheus registry for the scheduler metrics; none: no metrics. */
  readonly metrics?: Registry;
}

export interface ScheduleListOptions {
  /** Default 100, at most 1,000. */
  readonly limit?: number;
  /** Ids after this one (keyset paging). */
  readonly after?: string;
}

export const SCHEDULER_CAPS = Object.freeze({ maxSchedules: 100_000, maxBatch: 1_000, maxList: 1_000 });

export class Scheduler {
  #closed = false;

  private constructor(
    readonly name: string,
    /** The scheduler actor. */
    readonly ref: Ref,
    private readonly system: ActorSystem,
    private readonly db: Database,
    private readonly queue: TaskQueue,
    private readonly store: ScheduleStore,
    private readonly maxSchedules: number,
    private readonly ownLeaseStore: SqlKvStore | undefined,
    private readonly release: () => void,
  ) {}

  /** Creates the tables if missing and starts the scheduler actor (a follower until its lease is won). */
  static async open(system: ActorSystem, options: SchedulerOptions): Promise<Scheduler> {
    if (options === null || typeof options !== 'object') throw new InvalidBusOption('scheduler', 'must be an object');
    const { db, queue } = options;
    if (typeof db?.transaction !== 'function') throw new InvalidBusOption('scheduler.db', 'must be a Database');
    if (typeof queue?.enqueue !== 'function') throw new InvalidBusOption('scheduler.queue', 'must be a TaskQueue');
    const name = options.name ?? 'scheduler';
    if (typeof name !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(name)) throw new InvalidBusOption('scheduler.name', 'must be 1..128 characters of A-Z a-z 0-9 _ . : -');
    const tickMs = whole('scheduler.tickMs', options.tickMs ?? SCHEDULER_DEFAULTS.tickMs, 100, 60_000);
    const batch = whole('scheduler.batch', options.batch ?? 100, 1, SCHEDULER_CAPS.maxBatch);
    const maxSchedules = whole('scheduler.maxSchedules', options.maxSchedules ?? 10_000, 1, SCHEDULER_CAPS.maxSchedules);
    const misfireGraceMs = whole('scheduler.misfireGraceMs', options.misfireGraceMs ?? SCHEDULER_DEFAULTS.misfireGraceMs, 0, 3_600_000);
    const store = new ScheduleStore(db, options.table ?? DEFAULT_SCHEDULE_TABLE);
    await store.create();
    await createFenceTable(db);
    const ownLeaseStore = options.leaseStore === undefined ? await openKv(db, { clock: system.clock, table: 'molo_scheduler_lease' }) : undefined;
    const counts = emptySchedulerCounts();
    const metrics = schedulerMetrics(options.metrics);
    metrics?.add(name, counts);
    let ref: Ref;
    try {
      ref = await GenServer.start(
        system,
        () =>
          new SchedulerServer({
            name,
            holder: options.lease?.holder ?? randomUUID(),
            db,
            queue,
            store,
            leaseStore: options.leaseStore ?? ownLeaseStore!,
            lease: { ttlMs: options.lease?.ttlMs, renewEveryMs: options.lease?.renewEveryMs, safetyMarginMs: options.lease?.safetyMarginMs },
            tickMs,
            batch,
            misfireGraceMs,
            counts,
          }),
      );
    } catch (error) {
      metrics?.remove(name, counts);
      await ownLeaseStore?.close();
      throw error;
    }
    return new Scheduler(name, ref, system, db, queue, store, maxSchedules, ownLeaseStore, () => metrics?.remove(name, counts));
  }

  /** Adds an entry; resolves with it (its first fire computed from the clock). */
  async add(input: ScheduleEntryInput): Promise<ScheduleEntry> {
    this.#checkOpen();
    if (input === null || typeof input !== 'object') throw new InvalidSchedule('entry', 'must be an object { id?, queue, task, schedule }');
    const id = input.id === undefined ? newScheduleId() : checkScheduleId(input.id);
    const queueName = checkQueueName(input.queue);
    const task = checkTask(input.task);
    const now = this.#now();
    const { schedule, stored } = resolveSchedule(input.schedule, now);
    // The queue must exist (TaskQueueNotFound otherwise): a typo fails here, not at every fire.
    await this.queue.queueInfo(queueName);
    const entry: ScheduleEntry = { id, queue: queueName, task, schedule: stored, nextFireAt: firstDue(schedule, this.system.clock), lastFireAt: null, createdAt: now, updatedAt: now };
    await this.db.transaction(async (tx) => {
      if ((await this.store.count(tx)) >= this.maxSchedules) throw new ScheduleLimitReached(this.maxSchedules);
      if (!(await this.store.insert(tx, entry))) throw new ScheduleExists(id);
    });
    return entry;
  }

  /** Changes an entry's queue, task or schedule; a new schedule is due afresh from now. */
  async update(id: string, patch: ScheduleEntryPatch): Promise<ScheduleEntry> {
    this.#checkOpen();
    checkScheduleId(id);
    if (patch === null || typeof patch !== 'object') throw new InvalidSchedule('patch', 'must be an object { queue?, task?, schedule? }');
    const current = await this.store.get(id);
    if (current === undefined) throw new ScheduleNotFound(id);
    const now = this.#now();
    const queueName = patch.queue === undefined ? current.queue : checkQueueName(patch.queue);
    const task = patch.task === undefined ? current.task : checkTask(patch.task);
    if (patch.queue !== undefined) await this.queue.queueInfo(queueName);
    let { schedule, nextFireAt } = current;
    if (patch.schedule !== undefined) {
      const resolved = resolveSchedule(patch.schedule, now);
      schedule = resolved.stored;
      nextFireAt = firstDue(resolved.schedule, this.system.clock);
    }
    const entry: ScheduleEntry = { ...current, queue: queueName, task, schedule, nextFireAt, updatedAt: now };
    if (!(await this.db.transaction((tx) => this.store.replace(tx, entry)))) throw new ScheduleNotFound(id);
    return entry;
  }

  /** Removes an entry (ScheduleNotFound if there is none). */
  async remove(id: string): Promise<void> {
    this.#checkOpen();
    checkScheduleId(id);
    if (!(await this.store.delete(id))) throw new ScheduleNotFound(id);
  }

  async get(id: string): Promise<ScheduleEntry> {
    this.#checkOpen();
    checkScheduleId(id);
    const entry = await this.store.get(id);
    if (entry === undefined) throw new ScheduleNotFound(id);
    return entry;
  }

  async list(options: ScheduleListOptions = {}): Promise<ScheduleEntry[]> {
    this.#checkOpen();
    const limit = whole('list.limit', options.limit ?? 100, 1, SCHEDULER_CAPS.maxList);
    return this.store.list(limit, options.after === undefined ? undefined : checkScheduleId(options.after));
  }

  /** The actor's view: role, token, counts. */
  async status(): Promise<SchedulerStatus> {
    this.#checkOpen();
    return (await GenServer.call<SchedulerServer>(this.system, this.ref, { type: 'status' })) as SchedulerStatus;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Stops the actor (releasing the lease, so a follower takes over at once); later calls throw SchedulerClosed. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.system.isAlive(this.ref)) await GenServer.stop(this.system, this.ref, 'shutdown').catch(() => undefined);
    this.release();
    await this.ownLeaseStore?.close();
  }

  #checkOpen(): void {
    if (this.#closed) throw new SchedulerClosed(this.name);
  }

  #now(): number {
    return Math.floor(this.system.clock.wallNow());
  }
}

/** Opens the scheduler service; see {@link Scheduler.open}. */
export function openScheduler(system: ActorSystem, options: SchedulerOptions): Promise<Scheduler> {
  return Scheduler.open(system, options);
}

function whole(option: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new InvalidBusOption(option, `must be an integer in ${min}..${max}, got ${String(value)}`);
  return value;
}
