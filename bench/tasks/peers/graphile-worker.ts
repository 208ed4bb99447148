/**
 * graphile-worker 0.17 (0.18 needs Node 22) on the bench database. Bulk enqueue with `addJobs`;
 * process with one runner at `concurrency`, with the local queue (jobs fetched and locked in
 * batches) and batched completions its performance docs recommend; LISTEN/NOTIFY wakes an idle
 * runner. With batched completions, `job:success` comes before the job's row is deleted, so once
 * every task sent it the suite also waits until the store holds none of this round's jobs. A fresh
 * task identifier per round keeps rounds apart.
 */
import postgres from 'pg';
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import type { BenchServer } from '../../data/server.js';
import type { TaskContender, WorkerControl } from '../contender.js';
import { postgresDurability } from '../durability.js';

const LOCAL_QUEUE_SIZE = 500;
const COMPLETE_BATCH_DELAY_MS = 1;
const silent = new Logger(() => () => {});

/**
 * A pool with the error listeners graphile-worker asks for (on the pool, and on each client as it
 * connects): without them, a connection the server ends (the bench database dropped at the end)
 * is an unhandled 'error' event that kills the process.
 */
function guardedPool(connectionString: string, max: number, label: string): postgres.Pool {
  const pool = new postgres.Pool({ connectionString, max });
  const report = (error: Error): void => void process.stderr.write(`${label}: ${error.message}\n`);
  pool.on('error', report);
  pool.on('connect', (client) => client.on('error', report));
  return pool;
}

export function graphileWorkerContender(pg: BenchServer | undefined): TaskContender {
  let utils: WorkerUtils | undefined;
  let utilsPool: postgres.Pool | undefined;
  let round = 0;
  const identifier = (): string => `noop_${round}`;
  const connectionString = (): string => `postgres://${pg!.user}@${pg!.host}:${pg!.port}/${pg!.database}`;

  // The runner gets a pool of ours, with an error listener and ended after the runner stops: a
  // pool it made itself outlived stop and, when the bench database was dropped, threw its
  // connection's 'terminating connection' as an unhandled 'error' event.
  const workers = (concurrency: number): WorkerControl<{ runner: Runner; pool: postgres.Pool }> => ({
    async start(events) {
      const pool = guardedPool(connectionString(), concurrency + 2, 'graphile-worker pool');
      const runner = await run({
        pgPool: pool,
        concurrency,
        noHandleSignals: true,
        pollInterval: 2_000,
        logger: silent,
        taskList: { [identifier()]: async (payload) => events.started((payload as { seq: number }).seq) },
        preset: { worker: { localQueue: { size: LOCAL_QUEUE_SIZE }, completeJobBatchDelay: COMPLETE_BATCH_DELAY_MS } },
      });
      runner.events.on('job:success', () => events.completed());
      return { runner, pool };
    },
    stop: async ({ runner, pool }) => {
      await runner.stop();
      await pool.end();
    },
  });

  return {
    impl: 'graphile-worker',
    completion: "'job:success', then no job of the round left in graphile_worker.jobs",
    async open() {
      if (pg === undefined) throw new Error('postgres unavailable');
      utilsPool = guardedPool(connectionString(), 4, 'graphile-worker utils pool');
      utils = await makeWorkerUtils({ pgPool: utilsPool, logger: silent });
      await utils.migrate();
    },
    durability: () => postgresDurability(pg!),
    async reset() {
      round++;
    },
    enqueueBulk: async (seqs) => void (await utils!.addJobs(seqs.map((seq) => ({ identifier: identifier(), payload: { seq } })))),
    enqueueOne: async (seq) => void (await utils!.addJob(identifier(), { seq })),
    workers,
    allRecorded: () =>
      utils!.withPgClient(async (client) => {
        const { rows } = await client.query<{ left: string }>('SELECT count(*) AS left FROM graphile_worker.jobs WHERE task_identifier = $1', [identifier()]);
        return Number(rows[0]!.left) === 0;
      }),
    async close() {
      await utils?.release();
      utils = undefined;
      await utilsPool?.end();
      utilsPool = undefined;
    },
  };
}
