/**
 * The scheduler: a delayed task (`runAt`), an interval and a cron entry, persisted beside a SQLite
 * task queue, fired by the one scheduler that holds the lease, run by a worker pool. Entries survive a restart.
 * Run: npm run example examples/scheduler.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem, MoloError } from 'molo/actors';
import { openScheduler, openTaskQueue, startTaskWorkers, type Scheduler } from 'molo/bus';
import { openSqlite } from 'molo/data';

const dir = mkdtempSync(join(tmpdir(), 'molo-scheduler-example-'));
const system = new ActorSystem({ node: 'example' });
const db = await openSqlite(system, { file: join(dir, 'tasks.db') });
const queue = await openTaskQueue(db);
let scheduler: Scheduler | undefined;
try {
  await queue.createQueue('reports');
  scheduler = await openScheduler(system, { db, queue });
  // Workers run what the scheduler enqueues (`loop`: these handlers only print).
  let ran = 0;
  const workers = await startTaskWorkers(system, queue, {
    queue: 'reports',
    executor: { placement: 'loop', handlers: { remind: (payload) => void (ran++, console.log(`ran remind ${JSON.stringify(payload)}`)) } },
    pollMs: 100,
  });

  const reminder = await scheduler.add({ id: 'reminder', queue: 'reports', task: { name: 'remind', payload: { to: 'ops' } }, schedule: { kind: 'at', runAt: Date.now() + 1_500 } });
  const hourly = await scheduler.add({ id: 'hourly-digest', queue: 'reports', task: { name: 'digest' }, schedule: { kind: 'interval', everyMs: 3_600_000 } });
  const weekdays = await scheduler.add({ id: 'weekday-report', queue: 'reports', task: { name: 'report' }, schedule: { kind: 'cron', expression: '0 9 * * 1-5', missed: 'run-once' } });
  for (const entry of [reminder, hourly, weekdays]) console.log(`${entry.id}: ${entry.schedule.kind}, next fire in ${Math.round((entry.nextFireAt! - Date.now()) / 60_000)} min`);

  // Bad input is refused with a typed error.
  try {
    await scheduler.add({ queue: 'reports', task: { name: 'spam' }, schedule: { kind: 'interval', everyMs: 1_000 } });
  } catch (error) {
    console.log(`refused: ${(error as MoloError).code}`);
  }

  // The reminder fires once the scheduler leads (it holds the lease after its first try).
  const deadline = Date.now() + 10_000;
  while (ran === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  await workers.stop();
  const [task] = await queue.list('reports');
  console.log(`fired: ${task?.envelope.name}, ${task?.state} (key ${task?.envelope.idempotency_key?.replace(/\d+$/, '<time>')})`);
  const status = await scheduler.status();
  console.log(`scheduler: ${status.role}, fires ${status.fires}, refused ${status.refused}`);

  // A restart: the entries are in the database; the one-shot reminder, once fired, is gone.
  await scheduler.close();
  scheduler = await openScheduler(system, { db, queue });
  console.log(`after restart: ${(await scheduler.list()).map((entry) => entry.id).join(', ')}`);
} finally {
  await scheduler?.close();
  await queue.close();
  await db.close();
  await system.shutdown();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`actors left: ${system.actorCount}`);
