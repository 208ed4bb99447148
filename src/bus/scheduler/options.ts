/** The scheduler's options, with their defaults and caps, checked once. */
import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { Database } from '../../data/index.js';
import type { KvStore } from '../../data/kv/index.js';
import { InvalidBusOption, refuseUnknownBusOptions } from '../errors.js';
import { SchedulerQueueMismatch } from './errors.js';
import type { TaskQueue } from '../tasks/api.js';
import { SCHEDULER_DEFAULTS } from './schedule.js';
import { DEFAULT_SCHEDULE_TABLE, ScheduleStore } from './store.js';

export interface SchedulerOptions {
  /**
   * The task queue's database: a fire's enqueue and its bookkeeping commit in one transaction on it.
   * Default: the queue's own (`queue.database`); another one is refused at open unless it holds the queue's tables.
   */
  readonly db?: Database;
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

export const SCHEDULER_CAPS = Object.freeze({ maxSchedules: 100_000, maxBatch: 1_000, maxList: 1_000 });

export interface ResolvedSchedulerOptions {
  readonly name: string;
  readonly holder: string;
  readonly db: Database;
  readonly queue: TaskQueue;
  readonly store: ScheduleStore;
  readonly lease: { readonly ttlMs?: number; readonly renewEveryMs?: number; readonly safetyMarginMs?: number };
  readonly tickMs: number;
  readonly batch: number;
  readonly maxSchedules: number;
  readonly misfireGraceMs: number;
}

/** `start` is `openScheduler`'s own flag, beside the options. */
const SCHEDULER_OPTION_KEYS: readonly string[] = ['db', 'queue', 'name', 'leaseStore', 'lease', 'tickMs', 'batch', 'maxSchedules', 'misfireGraceMs', 'table', 'metrics', 'start'] satisfies readonly (keyof SchedulerOptions | 'start')[];

export function resolveSchedulerOptions(options: SchedulerOptions): ResolvedSchedulerOptions {
  if (options === null || typeof options !== 'object') throw new InvalidBusOption('scheduler', 'must be an object');
  refuseUnknownBusOptions('scheduler', options, SCHEDULER_OPTION_KEYS);
  const { queue } = options;
  if (typeof queue?.enqueue !== 'function') throw new InvalidBusOption('scheduler.queue', 'must be a TaskQueue');
  const db = options.db ?? queue.database;
  if (typeof db?.transaction !== 'function') throw new InvalidBusOption('scheduler.db', 'must be a Database');
  if (options.leaseStore !== undefined && typeof options.leaseStore?.setIfVersion !== 'function') throw new InvalidBusOption('scheduler.leaseStore', 'must be a KvStore');
  const name = options.name ?? 'scheduler';
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(name)) throw new InvalidBusOption('scheduler.name', 'must be 1..128 characters of A-Z a-z 0-9 _ . : -');
  return {
    name,
    holder: options.lease?.holder ?? randomUUID(),
    db,
    queue,
    store: new ScheduleStore(db, options.table ?? DEFAULT_SCHEDULE_TABLE),
    lease: { ttlMs: options.lease?.ttlMs, renewEveryMs: options.lease?.renewEveryMs, safetyMarginMs: options.lease?.safetyMarginMs },
    tickMs: whole('scheduler.tickMs', options.tickMs ?? SCHEDULER_DEFAULTS.tickMs, 100, 60_000),
    batch: whole('scheduler.batch', options.batch ?? 100, 1, SCHEDULER_CAPS.maxBatch),
    maxSchedules: whole('scheduler.maxSchedules', options.maxSchedules ?? 10_000, 1, SCHEDULER_CAPS.maxSchedules),
    misfireGraceMs: whole('scheduler.misfireGraceMs', options.misfireGraceMs ?? SCHEDULER_DEFAULTS.misfireGraceMs, 0, 3_600_000),
  };
}

/** A `db` other than the queue's must at least hold its tables, or every fire would fail (no such table). */
export async function checkQueueDatabase(config: Pick<ResolvedSchedulerOptions, 'db' | 'queue'>): Promise<void> {
  if (config.db === config.queue.database) return;
  const table = config.queue.tables.queues;
  try {
    await config.db.query(`SELECT 1 FROM ${table} WHERE 1 = 0`);
  } catch (error) {
    throw new SchedulerQueueMismatch(table, { cause: error });
  }
}

export function whole(option: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new InvalidBusOption(option, `must be an integer in ${min}..${max}, got ${String(value)}`);
  return value;
}
