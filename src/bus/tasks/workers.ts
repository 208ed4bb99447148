/**
 * Worker pools. A pool is a supervisor (`rest_for_one`) of two children, in this order:
 *
 * 1. `workers`: a dynamic supervisor (`simple_one_for_one`, at most 64 children per S7-10) of
 *    TaskWorker actors, each with its own executor, started ceil(concurrency / prefetch) times;
 * 2. `fetcher`: the one TaskFetcherServer that leases, dispatches, settles and heartbeats.
 *
 * A supervisor stops children in reverse order, so the fetcher drains (R7-9) while its workers are
 * still there to finish; a crashed fetcher restarts alone and finds the workers again. Put a pool
 * under an application supervisor with `taskWorkersChild`, several with `taskWorkerGroups` (at
 * most 32 per supervisor, S7-10), or start one on its own with `startTaskWorkers`.
 */
import type { ActorRuntime, Ref } from '../../actors/index.js';
import { GenServer, Supervisor, worker, type ChildSpec, type SupervisorSpec } from '../../behaviours/index.js';
import { InvalidBusOption } from '../errors.js';
import type { TaskQueue, TaskWorkers, TaskWorkersOptions, TaskWorkersStats } from './api.js';
import { TaskQueueClosed } from './errors.js';
import { TASK_POOL_BEHAVIOUR, TaskFetcherServer } from './fetcher.js';
import { resolveWorkersOptions, TASK_WORKER_LIMITS, TaskPoolHandle } from './pool-handle.js';
import { TaskWorkerServer } from './worker.js';

/** How long the pool's start waits for its hosts to load the handlers module (each host's own import is bounded too). */
const HANDLERS_READY_TIMEOUT_MS = 60_000;
/** Pending task names read at start to check the handlers cover them. */
const PENDING_NAMES_CHECKED = 1_000;

/**
 * Fails the pool's start, with the cause, when the handlers cannot serve the queue: the pool's
 * first host boot fails (the module does not load or exports no `handlers`), the pool's `names`
 * filter or tasks already waiting in the queue name a handler it lacks. Otherwise a typo would
 * start "ready" and then retry and dead-letter every task.
 *
 * Ready once the first host is up: the others keep booting (gated, see executors/boot-gate.ts),
 * and the fetcher gives tasks only to workers whose host is up. A later host that fails to boot
 * restarts its worker (worker.ts).
 */
async function checkHandlers(system: ActorRuntime, handle: TaskPoolHandle, workers: readonly Ref[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new InvalidBusOption('executor.module', `no host had loaded it within ${HANDLERS_READY_TIMEOUT_MS} ms`)), HANDLERS_READY_TIMEOUT_MS);
  });
  try {
    await Promise.race([handle.firstBoot, bound]);
  } finally {
    clearTimeout(timer);
  }
  const up = workers.find((ref) => handle.up.has(ref.toString())) ?? workers[0];
  const loaded = up === undefined ? [] : ((await GenServer.call<TaskWorkerServer>(system, up, 'ready', HANDLERS_READY_TIMEOUT_MS)) as readonly string[]);
  const names = new Set(loaded);
  const { queue, names: only } = handle.options;
  const wanted = only ?? (await handle.queue.pendingTaskNames?.(queue, PENDING_NAMES_CHECKED)) ?? [];
  const missing = wanted.filter((name) => !names.has(name));
  if (missing.length > 0) {
    const source = only === undefined ? `tasks waiting in queue '${queue}'` : 'the pool\'s `names`';
    throw new InvalidBusOption('executor.handlers', `has no handler for ${missing.map((name) => `'${name}'`).join(', ')}, named by ${source}`);
  }
}

/** The pool's supervisor spec; `handle` is shared by its fetcher and workers. */
function poolSpec(handle: TaskPoolHandle): SupervisorSpec {
  const { workers: count } = handle.options;
  const workers: ChildSpec = {
    id: 'workers',
    type: 'supervisor',
    start: async ({ system, parent }) => {
      const ref = await Supervisor.start(
        system,
        {
          strategy: 'simple_one_for_one',
          maxChildren: count,
          intensity: Math.max(10, count * 2),
          periodMs: 5_000,
          children: [worker('task-worker', () => new TaskWorkerServer(handle), { restart: 'permanent', shutdown: 5_000, server: { trapExit: true } })],
        },
        { link: parent },
      );
      handle.workers = ref;
      handle.beginStart();
      const started: Ref[] = [];
      for (let i = 0; i < count; i++) {
        const child = await Supervisor.startChild(system, ref, []);
        if (child !== undefined) started.push(child);
      }
      try {
        await checkHandlers(system, handle, started);
      } catch (error) {
        await Supervisor.stop(system, ref, 'shutdown').catch(() => undefined);
        throw error;
      }
      return ref;
    },
  };
  // The fetcher bounds its own drain (drainMs, then a bounded final settle), so its supervisor waits for it.
  const fetcher = worker('fetcher', () => new TaskFetcherServer(handle), { restart: 'permanent', shutdown: 'infinity', server: { trapExit: true } });
  return { strategy: 'rest_for_one', intensity: 10, periodMs: 5_000, children: [workers, fetcher] };
}

/** A supervisor child spec running a pool for `queue` (a supervisor child). */
export function taskWorkersChild(id: string, queue: TaskQueue, options: TaskWorkersOptions): ChildSpec & { readonly handle: TaskPoolHandle } {
  const handle = new TaskPoolHandle(queue, resolveWorkersOptions(options));
  const spec: ChildSpec = { id, type: 'supervisor', start: ({ system, parent }) => Supervisor.start(system, poolSpec(handle), { link: parent }) };
  // Not enumerable: the handle rides along for the caller, it is not a child-spec key (those are checked).
  return Object.defineProperty(spec, 'handle', { value: handle, enumerable: false }) as ChildSpec & { readonly handle: TaskPoolHandle };
}

/** A supervisor spec for several pools (`one_for_one`); at most 32 groups per supervisor (S7-10). */
export function taskWorkerGroups(groups: readonly { readonly id: string; readonly queue: TaskQueue; readonly options: TaskWorkersOptions }[]): SupervisorSpec {
  if (groups.length > TASK_WORKER_LIMITS.maxGroupsPerSupervisor) {
    throw new InvalidBusOption('tasks.maxGroupsPerSupervisor', `at most ${TASK_WORKER_LIMITS.maxGroupsPerSupervisor} worker groups per supervisor (S7-10), got ${groups.length}`);
  }
  return { strategy: 'one_for_one', intensity: 10, periodMs: 5_000, children: groups.map((group) => taskWorkersChild(group.id, group.queue, group.options)) };
}

class StartedTaskWorkers implements TaskWorkers {
  #stopping: Promise<void> | undefined;

  constructor(
    private readonly system: ActorRuntime,
    readonly supervisor: Ref,
    readonly handle: TaskPoolHandle,
  ) {}

  stats(): TaskWorkersStats {
    return this.handle.stats();
  }

  stop(deadlineMs?: number): Promise<void> {
    if (deadlineMs !== undefined) {
      if (!Number.isInteger(deadlineMs) || deadlineMs < 0 || deadlineMs > 600_000) throw new InvalidBusOption('stop.deadlineMs', 'must be an integer in 0..600,000');
      this.handle.drainMs = deadlineMs;
    }
    this.#stopping ??= Supervisor.stop(this.system, this.supervisor, 'shutdown').then(() => undefined);
    return this.#stopping;
  }
}

/** Starts a pool for `options.queue` on its own (unsupervised top: stop it with `stop`). */
export async function startTaskWorkers(system: ActorRuntime, queue: TaskQueue, options: TaskWorkersOptions): Promise<TaskWorkers> {
  if ((queue as { closed?: boolean }).closed === true) throw new TaskQueueClosed();
  // An unknown queue fails here, not in the fetcher's loop.
  await queue.queueInfo(options.queue);
  const handle = new TaskPoolHandle(queue, resolveWorkersOptions(options));
  const supervisor = await Supervisor.start(system, poolSpec(handle));
  return new StartedTaskWorkers(system, supervisor, handle);
}

/**
 * The admin tree's view of worker pools: a snapshot provider (the shape of the admin layer's
 * `SnapshotProvider`, which the bus may not import) that puts each pool's fetcher, with its
 * queue's depth, dead letters and the pool's counts, in `sections.tasks`.
 */
export function taskPoolsProvider(): { readonly behaviour: string; readonly section: string; describe(system: ActorRuntime, ref: Ref): Promise<TaskWorkersStats>; readonly descend: boolean } {
  return { behaviour: TASK_POOL_BEHAVIOUR, section: 'tasks', describe: (system, ref) => TaskWorkerPool.status(system, ref), descend: false };
}

export const TaskWorkerPool = {
  /** A pool's counts through its fetcher's mailbox (what the admin tree shows): `ref` is the fetcher. */
  status(system: ActorRuntime, ref: Ref, timeoutMs?: number): Promise<TaskWorkersStats> {
    return GenServer.call<TaskFetcherServer>(system, ref, 'status', timeoutMs);
  },

  /**
   * Sets how many tasks the pool runs at once (`ref` is the fetcher, as for `status`): at least 1,
   * at most the `concurrency` it started with (its hosts were started for that many; more is
   * held to it). Lowering lets the tasks in flight finish and hands out no more until under the
   * limit. Resolves with the counts after the change (`concurrency`, `maxConcurrency`). Kept while
   * the node runs (a restarted pool or fetcher keeps it); a new node starts at `concurrency`.
   */
  setConcurrency(system: ActorRuntime, ref: Ref, concurrency: number, timeoutMs?: number): Promise<TaskWorkersStats> {
    if (!Number.isInteger(concurrency) || concurrency < 1) return Promise.reject(new InvalidBusOption('concurrency', `must be a whole number of at least 1, got ${String(concurrency)}`));
    return GenServer.call<TaskFetcherServer>(system, ref, { concurrency }, timeoutMs);
  },
};
