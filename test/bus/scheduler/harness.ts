/**
 * A scheduler on a simulated clock over a real queue and database: the scheduler's actors, the
 * queue and the lease's KV store share one SimulatedClock (the database runs on real time in its
 * own system). `step` advances the clock one tick and waits for the scheduler and its lease to
 * settle, as a real second would let them.
 */
import { SimulatedClock, type ActorSystem, type ActorSystemOptions } from '../../../src/actors/index.js';
import { LeaderLease, openScheduler, type Scheduler, type SchedulerOptions, type SchedulerStatus, type SqlTaskQueue } from '../../../src/bus/index.js';
import { openKv, type SqlKvStore } from '../../../src/data/kv/index.js';
import { eventuallyAsync } from '../../data/kv/stores.js';
import { testSystem } from '../../support/systems.js';
import type { TaskBackendCase } from '../tasks/stores.js';

let serial = 0;

export interface Harness {
  readonly clock: SimulatedClock;
  readonly system: ActorSystem;
  readonly queue: SqlTaskQueue;
  readonly name: string;
  readonly table: string;
  scheduler: Scheduler;
  /** Opens another scheduler on the same tables, lease and queue (a restart, or a second node). */
  open(options?: Partial<SchedulerOptions>): Promise<Scheduler>;
  /** Advances the clock by `ms` (default one tick) and waits until the scheduler handled it and no lease call is under way. */
  step(ms?: number, scheduler?: Scheduler): Promise<SchedulerStatus>;
  /** Steps until `scheduler` leads (elected and fenced in). */
  lead(scheduler?: Scheduler): Promise<void>;
  close(): Promise<void>;
}

export async function harness(backend: TaskBackendCase, options: Partial<SchedulerOptions> = {}, systemOptions: Pick<ActorSystemOptions, 'logger'> = {}): Promise<Harness> {
  const clock = new SimulatedClock(0, Date.UTC(2026, 0, 1));
  const system = testSystem({ node: 'sched', clock, ...systemOptions });
  const queue = await backend.open(clock);
  await queue.createQueue('q');
  const stores: SqlKvStore[] = [];
  const id = `${process.pid}_${++serial}`;
  const name = `sched-${id}`;
  const table = `sched_${id}`;
  const open = async (more: Partial<SchedulerOptions> = {}): Promise<Scheduler> => {
    const leaseStore = await openKv(backend.db, { clock, table: 'sched_lease', sweepIntervalMs: 3_600_000 });
    stores.push(leaseStore);
    return openScheduler(system, { db: backend.db, queue, leaseStore, name, table, ...options, ...more });
  };
  const step = async (ms = 1_000, scheduler = h.scheduler): Promise<SchedulerStatus> => {
    clock.advance(ms);
    let status = await scheduler.status();
    await eventuallyAsync(async () => {
      status = await scheduler.status();
      return status.lease === null || !(await LeaderLease.status(system, status.lease)).pending;
    }, 10_000, 'the lease to settle');
    return status;
  };
  const h: Harness = {
    clock,
    system,
    queue,
    name,
    table,
    scheduler: await open(),
    open,
    step,
    async lead(scheduler = h.scheduler) {
      for (let i = 0; i < 30; i++) {
        if ((await step(100, scheduler)).role === 'leader') return;
      }
      throw new Error('the scheduler did not become leader');
    },
    async close() {
      await h.scheduler.close();
      await queue.close();
      await system.shutdown();
      for (const store of stores) await store.close();
    },
  };
  return h;
}
