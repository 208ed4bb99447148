/**
 * BullMQ against the local Redis (127.0.0.1:6379; MOLO_REDIS_HOST/PORT override). Bulk enqueue with
 * `addBulk`; process with one Worker at `concurrency`. Jobs are left to BullMQ's defaults (kept in
 * its completed set), as in the quick-start its docs give: `removeOnComplete` is advice for Redis
 * memory, not speed, and it adds work per job (one probe here processed 9,700/s with it against
 * 12,000/s without, on a warmer second run). A completion is counted on the
 * worker's `completed` event, which BullMQ emits once the job has moved to its completed set. A
 * fresh queue name per round, obliterated afterwards.
 */
import { Queue, Worker } from 'bullmq';
import { REDIS_HOST, REDIS_PORT } from '../../kv/redis.js';
import type { TaskContender, WorkerControl } from '../contender.js';
import { redisDurability } from '../durability.js';

export function bullmqContender(): TaskContender {
  const connection = { host: REDIS_HOST, port: REDIS_PORT, maxRetriesPerRequest: null, retryStrategy: () => null };
  let queue: Queue | undefined;
  let round = 0;
  const name = (): string => `molo-bench-${process.pid}-${round}`;

  const workers = (concurrency: number): WorkerControl<Worker> => ({
    async start(events) {
      const worker = new Worker(name(), async (job) => events.started((job.data as { seq: number }).seq), { connection, concurrency });
      worker.on('completed', () => events.completed());
      await worker.waitUntilReady();
      return worker;
    },
    stop: (worker) => worker.close(),
  });

  const drop = async (): Promise<void> => {
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
  };

  return {
    impl: 'bullmq',
    completion: "worker 'completed' event",
    async open() {
      queue = new Queue(name(), { connection });
      await queue.waitUntilReady();
      await queue.getJobCounts();
    },
    durability: redisDurability,
    async reset() {
      await drop();
      round++;
      queue = new Queue(name(), { connection });
      await queue.waitUntilReady();
    },
    enqueueBulk: async (seqs) => void (await queue!.addBulk(seqs.map((seq) => ({ name: 'noop', data: { seq } })))),
    enqueueOne: async (seq) => void (await queue!.add('noop', { seq })),
    workers,
    async close() {
      await drop();
      queue = undefined;
    },
  };
}
