/**
 * BullMQ against the local Redis (127.0.0.1:6379; MOLO_REDIS_HOST/PORT override). Enqueue with
 * `addBulk` in batches, process with one Worker at `concurrency`; completed jobs removed (as its
 * docs advise for throughput and memory), a fresh queue name per round, obliterated afterwards.
 */
import { Queue, Worker } from 'bullmq';
import { REDIS_HOST, REDIS_PORT } from '../../kv/redis.js';
import { Countdown, ENQUEUE_BATCH, measureLatency, type TaskContender } from '../contender.js';

export function bullmqContender(): TaskContender {
  const connection = { host: REDIS_HOST, port: REDIS_PORT, maxRetriesPerRequest: null, retryStrategy: () => null };
  let queue: Queue | undefined;
  let round = 0;
  const name = (): string => `molo-bench-${process.pid}-${round}`;
  const jobOptions = { removeOnComplete: true, removeOnFail: true };

  const startWorker = (concurrency: number, onJob: (seq: number) => void): Worker =>
    new Worker(
      name(),
      async (job) => {
        onJob((job.data as { seq: number }).seq);
      },
      { connection, concurrency, removeOnComplete: { count: 0 } },
    );

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
    async enqueue(n) {
      for (let start = 0; start < n; start += ENQUEUE_BATCH) {
        const size = Math.min(ENQUEUE_BATCH, n - start);
        await queue!.addBulk(Array.from({ length: size }, (_, i) => ({ name: 'noop', data: { seq: start + i }, opts: jobOptions })));
      }
    },
    async process(n, concurrency) {
      const countdown = new Countdown(n);
      const worker = startWorker(concurrency, () => countdown.tick());
      try {
        await countdown.done;
      } finally {
        await worker.close();
      }
    },
    async latency(samples, concurrency) {
      const hooks: { started?: (seq: number) => void } = {};
      const worker = startWorker(concurrency, (seq) => hooks.started?.(seq));
      await worker.waitUntilReady();
      try {
        return await measureLatency(samples, async (seq) => void (await queue!.add('noop', { seq }, jobOptions)), hooks);
      } finally {
        await worker.close();
      }
    },
    async close() {
      await queue?.obliterate({ force: true }).catch(() => undefined);
      await queue?.close();
      queue = undefined;
    },
  };
}
