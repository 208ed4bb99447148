/**
 * Molo's task queue as contenders: SQLite (a file of its own, in a temp directory) and Postgres
 * (the bench database), each with `loop` handlers (called here) and `thread` handlers (a host per
 * worker; the handler reports its start on a BroadcastChannel, see handlers.ts). Enqueue with
 * `enqueueMany` in batches; process with `startTaskWorkers` at the given concurrency.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import type { ActorSystem } from '../../src/actors/index.js';
import { openSqliteTaskQueue, openTaskQueue, startTaskWorkers, type ExecutorSpec, type TaskQueue, type TaskWorkers } from '../../src/bus/tasks/index.js';
import type { Database } from '../../src/data/index.js';
import { createPostgresPool } from '../../src/data/postgres.js';
import type { BenchServer } from '../data/server.js';
import { inBatches, latencyWith, processWith, type TaskContender, type WorkerControl } from './contender.js';
import { HANDLER_CHANNEL } from './handlers.js';

export function moloContenders(system: ActorSystem, pg: BenchServer | undefined): TaskContender[] {
  return (['sqlite', 'postgres'] as const).flatMap((backend) => (['loop', 'thread'] as const).map((placement) => moloContender(system, backend, placement, pg)));
}

function moloContender(system: ActorSystem, backend: 'sqlite' | 'postgres', placement: 'loop' | 'thread', pg: BenchServer | undefined): TaskContender {
  let queue: TaskQueue | undefined;
  let db: Database | undefined;
  let dir: string | undefined;
  let channel: BroadcastChannel | undefined;
  let round = 0;
  let handled: ((seq: number) => void) | undefined;
  const name = (): string => `bench_${round}`;
  const executor: ExecutorSpec =
    placement === 'loop'
      ? { placement: 'loop', handlers: { noop: (payload) => handled?.((payload as { seq: number }).seq) } }
      : { placement: 'thread', module: new URL('./handlers.ts', import.meta.url) };
  const workers = (concurrency: number): WorkerControl<TaskWorkers> => ({
    start(onHandled) {
      handled = onHandled;
      return startTaskWorkers(system, queue!, { queue: name(), executor, concurrency, batch: 100 });
    },
    async stop(started) {
      await started.stop();
      handled = undefined;
    },
  });

  return {
    impl: `molo-${backend}-${placement}`,
    async open() {
      if (placement === 'thread') {
        channel = new BroadcastChannel(HANDLER_CHANNEL);
        channel.onmessage = (event) => handled?.((event as { data: number }).data);
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
    async reset() {
      round++;
      await queue!.createQueue(name());
    },
    enqueue: (n) => inBatches(n, (seqs) => queue!.enqueueMany(name(), seqs.map((seq) => ({ name: 'noop', payload: { seq } })))),
    process: (n, concurrency) => processWith(n, workers(concurrency)),
    latency: (samples, concurrency) => latencyWith(samples, workers(concurrency), async (seq) => void (await queue!.enqueue(name(), { name: 'noop', payload: { seq } }))),
    async close() {
      channel?.close();
      await queue?.close();
      await db?.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      queue = undefined;
    },
  };
}
