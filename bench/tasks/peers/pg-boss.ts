/**
 * pg-boss 10 (the newest that runs on Node 20) on the bench database. Bulk enqueue with `insert`;
 * process with `concurrency` workers (`work` called that many times: pg-boss 10 has no per-worker
 * concurrency), each fetching `batchSize` jobs per poll at the shortest polling interval it allows
 * (0.5 s). No LISTEN: an idle worker finds a new job at its next poll. pg-boss has no completion
 * event: once every batch handler returned (pg-boss then completes the batch in one statement), the
 * suite waits until its queue size before `completed` is 0.
 */
import PgBoss from 'pg-boss';
import type { BenchServer } from '../../data/server.js';
import type { TaskContender, WorkerControl } from '../contender.js';
import { postgresDurability } from '../durability.js';

const BATCH_SIZE = 100;
const POLLING_INTERVAL_SECONDS = 0.5;

export function pgBossContender(pg: BenchServer | undefined): TaskContender {
  let boss: PgBoss | undefined;
  let round = 0;
  const name = (): string => `bench_${round}`;

  const workers = (concurrency: number): WorkerControl<void> => ({
    async start(events) {
      for (let i = 0; i < concurrency; i++) {
        await boss!.work<{ seq: number }>(name(), { batchSize: BATCH_SIZE, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS }, async (jobs) => {
          for (const job of jobs) events.started(job.data.seq);
          for (let j = 0; j < jobs.length; j++) events.completed();
        });
      }
    },
    stop: () => boss!.offWork(name()),
  });

  return {
    impl: 'pg-boss',
    completion: "handlers returned, then getQueueSize(before 'completed') = 0",
    async open() {
      if (pg === undefined) throw new Error('postgres unavailable');
      boss = new PgBoss({ host: pg.host, port: pg.port, user: pg.user, database: pg.database, schema: 'pgboss', max: 12, supervise: false, schedule: false });
      boss.on('error', (error) => process.stderr.write(`pg-boss: ${error.message}\n`));
      await boss.start();
    },
    durability: () => postgresDurability(pg!),
    async reset() {
      round++;
      await boss!.createQueue(name());
    },
    enqueueBulk: async (seqs) => void (await boss!.insert(seqs.map((seq) => ({ name: name(), data: { seq } })))),
    enqueueOne: async (seq) => void (await boss!.send(name(), { seq })),
    workers,
    allRecorded: async () => (await boss!.getQueueSize(name(), { before: 'completed' })) === 0,
    async close() {
      await boss?.stop({ graceful: true, wait: true, timeout: 5_000 }).catch(() => undefined);
      boss = undefined;
    },
  };
}
