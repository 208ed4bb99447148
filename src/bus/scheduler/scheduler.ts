/**
 * `openScheduler`: the scheduler service. Entries live in a table of the task queue's database and
 * survive restarts; `add`, `update`, `remove`, `get` and `list` work on any node (they write the
 * table, leader or not), and the one leading scheduler actor of the deployment fires what is due
 * (see scheduler-actor.ts for the fencing).
 */
import type { ActorSystem, Ref } from '../../actors/index.js';
import { worker } from '../../behaviours/child-spec.js';
import { GenServer } from '../../behaviours/gen-server.js';
import { Supervisor } from '../../behaviours/supervisor.js';
import { openKv, type SqlKvStore } from '../../data/kv/index.js';
import { createFenceTable } from '../leases/fence.js';
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
import { firstDue } from './schedule.js';
import { SchedulerServer, schedulerServerName, type SchedulerStatus } from './scheduler-actor.js';
import { checkQueueDatabase, resolveSchedulerOptions, SCHEDULER_CAPS, whole, type ResolvedSchedulerOptions, type SchedulerOptions } from './options.js';

export interface ScheduleListOptions {
  /** Default 100, at most 1,000. */
  readonly limit?: number;
  /** Ids after this one (keyset paging). */
  readonly after?: string;
}

/** The restart intensity of the supervisor `open` starts the scheduler under (OTP's default is 1 in 5 s; a scheduler is worth a few more). */
const SCHEDULER_RESTARTS = { intensity: 3, periodMs: 10_000 } as const;

export class Scheduler {
  #closed = false;

  private constructor(
    readonly name: string,
    /**
     * The supervisor (`molo.scheduler.<name>.supervisor`) of the scheduler actor this handle started, which
     * restarts it if it crashes; undefined with `start: false` (one runs elsewhere, say under
     * your own supervisor through schedulerChild).
     */
    readonly ref: Ref | undefined,
    private readonly system: ActorSystem,
    private readonly config: ResolvedSchedulerOptions,
    private readonly ownLeaseStore: SqlKvStore | undefined,
    private readonly release: () => void,
  ) {}

  /**
   * Creates the tables if missing and starts the scheduler actor (a follower until its lease is
   * won). With `start: false`, only the handle: add, update, remove, get and list work on the
   * table, and `status` asks the scheduler of this name running in `system` (see schedulerChild).
   */
  static async open(system: ActorSystem, options: SchedulerOptions & { readonly start?: boolean }): Promise<Scheduler> {
    const config = resolveSchedulerOptions(options);
    await checkQueueDatabase(config);
    await config.store.create();
    await createFenceTable(config.db);
    if (options.start === false) return new Scheduler(config.name, undefined, system, config, undefined, () => undefined);
    const ownLeaseStore = options.leaseStore === undefined ? await openKv(config.db, { clock: system.clock, table: 'molo_scheduler_lease' }) : undefined;
    const counts = emptySchedulerCounts();
    const metrics = schedulerMetrics(options.metrics);
    metrics?.add(config.name, counts);
    let ref: Ref;
    try {
      // Supervised by default: a crashed scheduler is started again (its lease and fences keep a restart from double firing).
      const leaseStore = options.leaseStore ?? ownLeaseStore!;
      ref = await Supervisor.start(
        system,
        {
          strategy: 'one_for_one',
          intensity: SCHEDULER_RESTARTS.intensity,
          periodMs: SCHEDULER_RESTARTS.periodMs,
          children: [worker('scheduler', () => new SchedulerServer({ ...config, leaseStore, counts }), { server: { trapExit: true } })],
        },
        { name: `${schedulerServerName(config.name)}.supervisor` },
      );
    } catch (error) {
      metrics?.remove(config.name, counts);
      await ownLeaseStore?.close();
      throw error;
    }
    return new Scheduler(config.name, ref, system, config, ownLeaseStore, () => metrics?.remove(config.name, counts));
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
    await this.config.queue.queueInfo(queueName);
    const entry: ScheduleEntry = { id, queue: queueName, task, schedule: stored, nextFireAt: firstDue(schedule, this.system.clock), lastFireAt: null, createdAt: now, updatedAt: now };
    const { db, store, maxSchedules } = this.config;
    await db.transaction(async (tx) => {
      if ((await store.count(tx)) >= maxSchedules) throw new ScheduleLimitReached(maxSchedules);
      if (!(await store.insert(tx, entry))) throw new ScheduleExists(id);
    });
    return entry;
  }

  /** Changes an entry's queue, task or schedule; a new schedule is due afresh from now. */
  async update(id: string, patch: ScheduleEntryPatch): Promise<ScheduleEntry> {
    this.#checkOpen();
    checkScheduleId(id);
    if (patch === null || typeof patch !== 'object') throw new InvalidSchedule('patch', 'must be an object { queue?, task?, schedule? }');
    const current = await this.config.store.get(id);
    if (current === undefined) throw new ScheduleNotFound(id);
    const now = this.#now();
    const queueName = patch.queue === undefined ? current.queue : checkQueueName(patch.queue);
    const task = patch.task === undefined ? current.task : checkTask(patch.task);
    if (patch.queue !== undefined) await this.config.queue.queueInfo(queueName);
    let { schedule, nextFireAt } = current;
    if (patch.schedule !== undefined) {
      const resolved = resolveSchedule(patch.schedule, now);
      schedule = resolved.stored;
      nextFireAt = firstDue(resolved.schedule, this.system.clock);
    }
    const entry: ScheduleEntry = { ...current, queue: queueName, task, schedule, nextFireAt, updatedAt: now };
    if (!(await this.config.db.transaction((tx) => this.config.store.replace(tx, entry)))) throw new ScheduleNotFound(id);
    return entry;
  }

  /** Removes an entry (ScheduleNotFound if there is none). */
  async remove(id: string): Promise<void> {
    this.#checkOpen();
    checkScheduleId(id);
    if (!(await this.config.store.delete(id))) throw new ScheduleNotFound(id);
  }

  async get(id: string): Promise<ScheduleEntry> {
    this.#checkOpen();
    checkScheduleId(id);
    const entry = await this.config.store.get(id);
    if (entry === undefined) throw new ScheduleNotFound(id);
    return entry;
  }

  async list(options: ScheduleListOptions = {}): Promise<ScheduleEntry[]> {
    this.#checkOpen();
    const limit = whole('list.limit', options.limit ?? 100, 1, SCHEDULER_CAPS.maxList);
    return this.config.store.list(limit, options.after === undefined ? undefined : checkScheduleId(options.after));
  }

  /** The scheduler actor's view (role, token, counts); it answers between ticks. */
  async status(): Promise<SchedulerStatus> {
    this.#checkOpen();
    return (await GenServer.call<SchedulerServer>(this.system, schedulerServerName(this.name), { type: 'status' })) as SchedulerStatus;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Stops the actor this handle started (releasing the lease, so a follower takes over at once); later calls throw SchedulerClosed. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // The supervisor stops the scheduler with `shutdown`: it traps exits, so it releases its lease first.
    if (this.ref !== undefined && this.system.isAlive(this.ref)) await Supervisor.stop(this.system, this.ref).catch(() => undefined);
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
export function openScheduler(system: ActorSystem, options: SchedulerOptions & { readonly start?: boolean }): Promise<Scheduler> {
  return Scheduler.open(system, options);
}

