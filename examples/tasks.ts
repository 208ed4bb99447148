/**
 * The durable task queue: a SQLite queue in a file of its own, a supervised worker pool running
 * `loop` handlers, an idempotent enqueue, a delayed task, priorities, a retried failure, a
 * permanent failure in the dead-letter queue and its redrive, an enqueue inside the caller's
 * transaction, and a graceful shutdown.
 * Run: npm run example examples/tasks.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from 'molo/actors';
import { Supervisor } from 'molo/behaviours';
import { openTaskQueue, PermanentTaskFailure, taskWorkersChild, type TaskHandlers } from 'molo/bus';
import { openSqlite } from 'molo/data';

const dir = mkdtempSync(join(tmpdir(), 'molo-tasks-example-'));
const system = new ActorSystem({ node: 'example' });
// The app's own database: the queue's tables live beside the app's, so an enqueue can join its transactions.
const db = await openSqlite(system, { file: join(dir, 'app.db') });
const queue = await openTaskQueue(db);
try {
  await db.query('CREATE TABLE signups (email text PRIMARY KEY)');
  await queue.createQueue('emails', { retry: { baseMs: 200, jitterMs: 0 } });

  let flakyRuns = 0;
  let done = 0;
  const handlers: TaskHandlers = {
    welcome: (payload) => {
      console.log(`sent welcome mail to ${(payload as { email: string }).email}`);
      done++;
    },
    digest: () => {
      // The first run fails: the task is retried after its backoff (200 ms here).
      if (++flakyRuns === 1) throw new Error('mail server busy');
      console.log(`sent digest on run ${flakyRuns}`);
      done++;
    },
    broken: () => {
      done++;
      throw new PermanentTaskFailure('template missing');
    },
  };

  const pool = taskWorkersChild('email-workers', queue, { queue: 'emails', concurrency: 2, pollMs: 50, executor: { placement: 'loop', handlers } });
  const root = await Supervisor.start(system, { children: [pool] });

  // Sign-up and its welcome mail commit together, or not at all.
  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO signups (email) VALUES ($1)', ['ada@example.com']);
    await queue.enqueue('emails', { name: 'welcome', payload: { email: 'ada@example.com' }, idempotencyKey: 'welcome:ada' }, { tx });
  });
  const again = await queue.enqueue('emails', { name: 'welcome', payload: { email: 'ada@example.com' }, idempotencyKey: 'welcome:ada' });
  console.log(`welcome for ada again: duplicate ${again.duplicate}`);
  await queue.enqueue('emails', { name: 'digest', runAt: Date.now() + 300 }, { priority: 5 });
  const broken = await queue.enqueue('emails', { name: 'broken', maxRetries: 3 });

  while (done < 3) await new Promise((resolve) => setTimeout(resolve, 20));
  const [letter] = await queue.deadLetters('emails');
  console.log(`dead letter: ${letter?.envelope.name}, reason ${letter?.reason}, attempts ${letter?.envelope.attempts}`);
  console.log(`redriven: ${await queue.redrive('emails', [broken.id])}`);
  while (done < 4) await new Promise((resolve) => setTimeout(resolve, 20));
  while ((await queue.queueInfo('emails')).deadLetters < 1) await new Promise((resolve) => setTimeout(resolve, 20));

  const info = await queue.queueInfo('emails');
  console.log(`queue: depth ${info.depth}, succeeded ${info.counts.succeeded}, dead letters ${info.deadLetters}`);
  const stats = pool.handle.stats();
  console.log(`pool: ${stats.workers} workers, ${stats.succeeded} succeeded, ${stats.failed} failed runs`);
  // Stopping the supervisor drains the pool (R7-9): running tasks finish or go back to the queue.
  await Supervisor.stop(system, root);
} finally {
  await queue.close();
  await db.close();
  console.log(`actors left: ${system.processes().length}`);
  system.shutdown();
  rmSync(dir, { recursive: true, force: true });
}
