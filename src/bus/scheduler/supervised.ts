/**
 * The scheduler under a supervisor: `schedulerChild` is a child spec for the scheduler actor (it
 * creates its tables in init and traps exits, so a supervisor's shutdown releases its lease), and
 * `schedulerProvider` shows it in the admin tree's `schedulers` section. Entries are managed with
 * a handle that starts no actor of its own: `openScheduler(system, { ...options, start: false })`.
 */
import type { ActorRuntime, Ref } from '../../actors/index.js';
import { worker, type ChildSpec } from '../../behaviours/child-spec.js';
import { GenServer } from '../../behaviours/gen-server.js';
import type { KvStore } from '../../data/kv/index.js';
import { emptySchedulerCounts, schedulerMetrics } from './metrics.js';
import { resolveSchedulerOptions, type SchedulerOptions } from './options.js';
import { SchedulerServer, type SchedulerStatus } from './scheduler-actor.js';

/** The behaviour name of the scheduler actor in process info (a GenServer's class name). */
export const SCHEDULER_BEHAVIOUR = 'SchedulerServer';

/** A child spec for the scheduler actor; `leaseStore` is required here (the supervisor owns no store to close). */
export function schedulerChild(id: string, options: SchedulerOptions & { readonly leaseStore: KvStore }, spec: Omit<ChildSpec, 'id' | 'start'> = {}): ChildSpec {
  const config = resolveSchedulerOptions(options);
  // One set of counts across restarts: the metrics keep counting up.
  const counts = emptySchedulerCounts();
  schedulerMetrics(options.metrics)?.add(config.name, counts);
  return worker(id, () => new SchedulerServer({ ...config, leaseStore: options.leaseStore, counts }), { ...spec, server: { trapExit: true } });
}

/** The scheduler's status as the admin tree shows it (no refs). */
export async function describeScheduler(system: ActorRuntime, ref: Ref): Promise<Omit<SchedulerStatus, 'lease'>> {
  const { lease: _lease, ...status } = (await GenServer.call<SchedulerServer>(system, ref, { type: 'status' })) as SchedulerStatus;
  return status;
}

/** The admin snapshot provider for scheduler actors: pass it in startNode's `snapshotProviders`. */
export function schedulerProvider(): { readonly behaviour: string; readonly section: string; describe: typeof describeScheduler; readonly descend: boolean } {
  return { behaviour: SCHEDULER_BEHAVIOUR, section: 'schedulers', describe: describeScheduler, descend: false };
}
