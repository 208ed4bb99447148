/**
 * pg-boss 10 (the newest that runs on Node 20) on the bench database. Enqueue with `insert` in
 * batches; process with `concurrency` workers (`work` called that many times: pg-boss 10 has no
 * per-worker concurrency), each fetching `batchSize` jobs per poll at the shortest polling
 * interval it allows (0.5 s). No LISTEN: an idle worker finds a new job at its next poll.
 */
import PgBoss from 'pg-boss';
import type { BenchServer } from '../../data/server.js';
import { Countdown, ENQUEUE_BATCH, measureLatency, type TaskContender } from '../contender.js';

const BATCH_SIZE = 100;
const POLLING_INTERVAL_SECONDS = 0.5;

export function pgBossContender(pg: BenchServer | undefined): TaskContender {
  let boss: PgBoss | undefined;
  let round = 0;
  const name = (): string => `bench_${round}`;

  const startWorkers = async (concurrency: number, onJob: (seq: number) => void): Promise<void> => {
    for (let i = 0; i < concurrency; i++) {
      await boss!.work<{ seq: number }>(name(), { batchSize: BATCH_SIZE, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS }, async (jobs) => {
        for (const job of jobs) onJob(job.data.seq);
      });
    }
  };

  return {
    impl: 'pg-boss',
    async open() {
      if (pg === undefined) throw new Error('postgres unavailable');
      boss = new PgBoss({ host: pg.host, port: pg.port, user: pg.user, database: pg.database, schema: 'pgboss', max: 12, supervise: false, schedule: false });
      boss.on('error', (error) => process.stderr.write(`pg-boss: ${error.message}\n`));
      await boss.start();
    },
    async reset() {
      round++;
      await boss!.createQueue(name());
    },
    async enqueue(n) {
      for (let start = 0; start < n; start += ENQUEUE_BATCH) {
        const size = Math.min(ENQUEUE_BATCH, n - start);
        await boss!.insert(Array.from({ length: size }, (_, i) => ({ name: name(), data: { seq: start + i } })));
      }
    },
    async process(n, concurrency) {
      const countdown = new Countdown(n);
      await startWorkers(concurrency, () => countdown.tick());
      try {
        await countdown.done;
      } finally {
        await boss!.offWork(name());
      }
    },
    async latency(samples, concurrency) {
      const hooks: { started?: (seq: number) => void } = {};
      await startWorkers(concurrency, (seq) => hooks.started?.(seq));
      try {
        return await measureLatency(samples, async (seq) => void (await boss!.send(name(), { seq })), hooks);
      } finally {
        await boss!.offWork(name());
      }
    },
    async close() {
      await boss?.stop({ graceful: true, wait: true, timeout: 5_000 }).catch(() => undefined);
      boss = undefined;
    },
  };
}
