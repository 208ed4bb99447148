/**
 * Molo's task queue as contenders: SQLite (a file of its own, in a temp directory, the queue's
 * default `synchronous`) and Postgres (the bench database), each with `loop` handlers (called here)
 * and `thread` handlers (a host per worker; the handler reports its start on a BroadcastChannel, see
 * handlers.ts). Bulk enqueue with `enqueueMany`; process with `startTaskWorkers`. A completion is
 * counted when the queue's `settle` that recorded it has resolved (the pool's own `succeeded` count
 * moves before that commit).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import type { ActorSystem } from '../../src/actors/index.js';
import {
  openSqliteTaskQueue,
  openTaskQueue,
  startTaskWorkers,
  TASKS_DEFAULT_SYNCHRONOUS,
  type ExecutorSpec,
  type TaskQueue,
  type TaskSettlement,
  type TaskWorkers,
} from '../../src/bus/tasks/index.js';
import type { Database } from '../../src/data/index.js';
import { createPostgresPool } from '../../src/data/postgres.js';
import type { BenchServer } from '../data/server.js';
import type { TaskContender, WorkerControl, WorkerEvents } from './contender.js';
import { postgresDurability } from './durability.js';
import { HANDLER_CHANNEL } from './handlers.js';

export function moloContenders(system: ActorSystem, pg: BenchServer | undefined): TaskContender[] {
  return (['sqlite', 'postgres'] as const).flatMap((backend) => (['loop', 'thread'] as const).map((placement) => moloContender(system, backend, placement, pg)));
}

/** The queue as the pool sees it, with each recorded success reported once its `settle` resolved. */
function countingSettles(queue: TaskQueue, recorded: () => WorkerEvents | undefined): TaskQueue {
  return new Proxy(queue, {
    get(target, property) {
      if (property === 'settle') {
        return async (name: string, settlements: readonly TaskSettlement[]) => {
          await target.settle(name, settlements);
          const events = recorded();
          if (events !== undefined) for (const settlement of settlements) if (settlement.outcome.kind === 'succeeded') events.completed();
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function moloContender(system: ActorSystem, backend: 'sqlite' | 'postgres', placement: 'loop' | 'thread', pg: BenchServer | undefined): TaskContender {
  let queue: TaskQueue | undefined;
  let db: Database | undefined;
  let dir: string | undefined;
  let channel: BroadcastChannel | undefined;
  let round = 0;
  let events: WorkerEvents | undefined;
  const name = (): string => `bench_${round}`;
  const executor: ExecutorSpec =
    placement === 'loop'
      ? { placement: 'loop', handlers: { noop: (payload) => events?.started((payload as { seq: number }).seq) } }
      : { placement: 'thread', module: new URL('./handlers.ts', import.meta.url) };
  const workers = (concurrency: number): WorkerControl<TaskWorkers> => ({
    start(reported) {
      events = reported;
      return startTaskWorkers(system, countingSettles(queue!, () => events), { queue: name(), executor, concurrency, batch: 100 });
    },
    async stop(started) {
      await started.stop();
      events = undefined;
    },
  });

  return {
    impl: `molo-${backend}-${placement}`,
    completion: 'settle committed',
    async open() {
      if (placement === 'thread') {
        channel = new BroadcastChannel(HANDLER_CHANNEL);
        channel.onmessage = (event) => events?.started((event as { data: number }).data);
      }
      if (backend === 'sqlite') {
        dir = mkdtempSync(join(tmpdir(), 'molo-bench-tasks-'));
        queue = await openSqliteTaskQueue(system, { file: join(dir, 'tasks.db') });
      } else {
        if (pg === undefined) throw new Error('postgres unavailable');
        db = await createPostgresPool(system, { host: pg.host, port: pg.port, user: pg.user, database: pg.database, min: 4, max: 8 });
        queue = await openTaskQueue(db, {});
      }
    },
    durability: async () => (backend === 'sqlite' ? `sqlite synchronous=${TASKS_DEFAULT_SYNCHRONOUS} (WAL)` : await postgresDurability(pg!)),
    async reset() {
      round++;
      await queue!.createQueue(name());
    },
    enqueueBulk: async (seqs) => void (await queue!.enqueueMany(name(), seqs.map((seq) => ({ name: 'noop', payload: { seq } })))),
    enqueueOne: async (seq) => void (await queue!.enqueue(name(), { name: 'noop', payload: { seq } })),
    workers,
    async close() {
      channel?.close();
      await queue?.close();
      await db?.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      queue = undefined;
    },
  };
}
