/**
 * graphile-worker 0.17 (0.18 needs Node 22) on the bench database. Enqueue with `addJobs` in
 * batches; process with one runner at `concurrency`, with the local queue (jobs fetched and locked
 * in batches) and batched completions its performance docs recommend; LISTEN/NOTIFY wakes an idle
 * runner. A fresh task identifier per round keeps rounds apart.
 */
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import type { BenchServer } from '../../data/server.js';
import { Countdown, ENQUEUE_BATCH, measureLatency, type TaskContender } from '../contender.js';

const LOCAL_QUEUE_SIZE = 500;
const COMPLETE_BATCH_DELAY_MS = 1;
const silent = new Logger(() => () => {});

export function graphileWorkerContender(pg: BenchServer | undefined): TaskContender {
  let utils: WorkerUtils | undefined;
  let round = 0;
  const identifier = (): string => `noop_${round}`;
  const connectionString = (): string => `postgres://${pg!.user}@${pg!.host}:${pg!.port}/${pg!.database}`;

  const startRunner = (concurrency: number, onJob: (seq: number) => void): Promise<Runner> =>
    run({
      connectionString: connectionString(),
      concurrency,
      noHandleSignals: true,
      pollInterval: 2_000,
      logger: silent,
      maxPoolSize: concurrency + 2,
      taskList: {
        [identifier()]: async (payload) => {
          onJob((payload as { seq: number }).seq);
        },
      },
      preset: { worker: { localQueue: { size: LOCAL_QUEUE_SIZE }, completeJobBatchDelay: COMPLETE_BATCH_DELAY_MS } },
    });

  return {
    impl: 'graphile-worker',
    async open() {
      if (pg === undefined) throw new Error('postgres unavailable');
      utils = await makeWorkerUtils({ connectionString: connectionString(), logger: silent });
      await utils.migrate();
    },
    async reset() {
      round++;
    },
    async enqueue(n) {
      for (let start = 0; start < n; start += ENQUEUE_BATCH) {
        const size = Math.min(ENQUEUE_BATCH, n - start);
        await utils!.addJobs(Array.from({ length: size }, (_, i) => ({ identifier: identifier(), payload: { seq: start + i } })));
      }
    },
    async process(n, concurrency) {
      const countdown = new Countdown(n);
      const runner = await startRunner(concurrency, () => countdown.tick());
      try {
        await countdown.done;
      } finally {
        await runner.stop();
      }
    },
    async latency(samples, concurrency) {
      const hooks: { started?: (seq: number) => void } = {};
      const runner = await startRunner(concurrency, (seq) => hooks.started?.(seq));
      try {
        return await measureLatency(samples, async (seq) => void (await utils!.addJob(identifier(), { seq })), hooks);
      } finally {
        await runner.stop();
      }
    },
    async close() {
      await utils?.release();
      utils = undefined;
    },
  };
}
