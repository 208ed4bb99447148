/**
 * BullMQ against the local Redis (127.0.0.1:6379; MOLO_REDIS_HOST/PORT override). Enqueue with
 * `addBulk` in batches, process with one Worker at `concurrency`; completed jobs removed (as its
 * docs advise for throughput and memory), a fresh queue name per round, obliterated afterwards.
 */
import { Queue, Worker } from 'bullmq';
import { REDIS_HOST, REDIS_PORT } from '../../kv/redis.js';
import { inBatches, latencyWith, processWith, type TaskContender, type WorkerControl } from '../contender.js';

export function bullmqContender(): TaskContender {
  const connection = { host: REDIS_HOST, port: REDIS_PORT, maxRetriesPerRequest: null, retryStrategy: () => null };
  let queue: Queue | undefined;
  let round = 0;
  const name = (): string => `molo-bench-${process.pid}-${round}`;
  const jobOptions = { removeOnComplete: true, removeOnFail: true };

  const workers = (concurrency: number): WorkerControl<Worker> => ({
    async start(handled) {
      const worker = new Worker(name(), async (job) => handled((job.data as { seq: number }).seq), {
        connection,
        concurrency,
        removeOnComplete: { count: 0 },
      });
      await worker.waitUntilReady();
      return worker;
    },
    stop: (worker) => worker.close(),
  });

  return {
    impl: 'bullmq',
    async open() {
      queue = new Queue(name(), { connection });
      await queue.waitUntilReady();
      await queue.getJobCounts();
    },
    async reset() {
      await queue?.obliterate({ force: true }).catch(() => undefined);
      await queue?.close();
      round++;
      queue = new Queue(name(), { connection });
      await queue.waitUntilReady();
    },
    enqueue: (n) => inBatches(n, (seqs) => queue!.addBulk(seqs.map((seq) => ({ name: 'noop', data: { seq }, opts: jobOptions })))),
    process: (n, concurrency) => processWith(n, workers(concurrency)),
    latency: (samples, concurrency) => latencyWith(samples, workers(concurrency), async (seq) => void (await queue!.add('noop', { seq }, jobOptions))),
    async close() {
      await queue?.obliterate({ force: true }).catch(() => undefined);
      await queue?.close();
      queue = undefined;
    },
  };
}
