/**
 * pg-boss 10 (the newest that runs on Node 20) on the bench database. Enqueue with `insert` in
 * batches; process with `concurrency` workers (`work` called that many times: pg-boss 10 has no
 * per-worker concurrency), each fetching `batchSize` jobs per poll at the shortest polling
 * interval it allows (0.5 s). No LISTEN: an idle worker finds a new job at its next poll.
 */
import PgBoss from 'pg-boss';
import type { BenchServer } from '../../data/server.js';
import { inBatches, latencyWith, processWith, type TaskContender, type WorkerControl } from '../contender.js';

const BATCH_SIZE = 100;
const POLLING_INTERVAL_SECONDS = 0.5;

export function pgBossContender(pg: BenchServer | undefined): TaskContender {
  let boss: PgBoss | undefined;
  let round = 0;
  const name = (): string => `bench_${round}`;

  const workers = (concurrency: number): WorkerControl<void> => ({
    async start(handled) {
      for (let i = 0; i < concurrency; i++) {
        await boss!.work<{ seq: number }>(name(), { batchSize: BATCH_SIZE, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS }, async (jobs) => {
          for (const job of jobs) handled(job.data.seq);
        });
      }
    },
    stop: () => boss!.offWork(name()),
  });

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
    enqueue: (n) => inBatches(n, (seqs) => boss!.insert(seqs.map((seq) => ({ name: name(), data: { seq } })))),
    process: (n, concurrency) => processWith(n, workers(concurrency)),
    latency: (samples, concurrency) => latencyWith(samples, workers(concurrency), async (seq) => void (await boss!.send(name(), { seq }))),
    async close() {
      await boss?.stop({ graceful: true, wait: true, timeout: 5_000 }).catch(() => undefined);
      boss = undefined;
    },
  };
}
