/**
 * graphile-worker 0.17 (0.18 needs Node 22) on the bench database. Enqueue with `addJobs` in
 * batches; process with one runner at `concurrency`, with the local queue (jobs fetched and locked
 * in batches) and batched completions its performance docs recommend; LISTEN/NOTIFY wakes an idle
 * runner. A fresh task identifier per round keeps rounds apart.
 */
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import type { BenchServer } from '../../data/server.js';
import { inBatches, latencyWith, processWith, type TaskContender, type WorkerControl } from '../contender.js';

const LOCAL_QUEUE_SIZE = 500;
const COMPLETE_BATCH_DELAY_MS = 1;
const silent = new Logger(() => () => {});

export function graphileWorkerContender(pg: BenchServer | undefined): TaskContender {
  let utils: WorkerUtils | undefined;
  let round = 0;
  const identifier = (): string => `noop_${round}`;
  const connectionString = (): string => `postgres://${pg!.user}@${pg!.host}:${pg!.port}/${pg!.database}`;

  const runners = (concurrency: number): WorkerControl<Runner> => ({
    start: (handled) =>
      run({
        connectionString: connectionString(),
        concurrency,
        noHandleSignals: true,
        pollInterval: 2_000,
        logger: silent,
        maxPoolSize: concurrency + 2,
        taskList: { [identifier()]: async (payload) => handled((payload as { seq: number }).seq) },
        preset: { worker: { localQueue: { size: LOCAL_QUEUE_SIZE }, completeJobBatchDelay: COMPLETE_BATCH_DELAY_MS } },
      }),
    stop: (runner) => runner.stop(),
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
    enqueue: (n) => inBatches(n, (seqs) => utils!.addJobs(seqs.map((seq) => ({ identifier: identifier(), payload: { seq } })))),
    process: (n, concurrency) => processWith(n, runners(concurrency)),
    latency: (samples, concurrency) => latencyWith(samples, runners(concurrency), async (seq) => void (await utils!.addJob(identifier(), { seq }))),
    async close() {
      await utils?.release();
      utils = undefined;
    },
  };
}
