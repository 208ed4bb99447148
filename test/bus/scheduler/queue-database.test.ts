/**
 * The scheduler and the default task queue (a SQLite file of its own): the scheduler takes the
 * queue's database itself, and a `db` that does not hold the queue's tables is refused at open
 * instead of failing every fire with "no such table".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { openScheduler, openSqliteTaskQueue, type SqlTaskQueue } from '../../../src/bus/index.js';
import { openSqlite, type Database } from '../../../src/data/index.js';
import { testSystem } from '../../support/systems.js';

let dir: string;
let system: ActorSystem;
let queue: SqlTaskQueue;
const closers: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'molo-sched-queue-db-'));
  system = testSystem({ node: 'sched-db' });
  queue = await openSqliteTaskQueue(system, { file: join(dir, 'tasks.db'), readers: 0 });
  await queue.createQueue('reports');
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await queue.close();
  await system.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

describe('openScheduler and the queue database', () => {
  it('uses the queue’s own database when no db is given, and its fires land in the queue', async () => {
    expect(queue.database.backend).toBe('sqlite');
    const scheduler = await openScheduler(system, { queue, tickMs: 100 });
    closers.push(() => scheduler.close());
    await scheduler.add({ id: 'soon', queue: 'reports', task: { name: 'remind', payload: { to: 'ops' } }, schedule: { kind: 'at', runAt: Date.now() + 200 } });
    const deadline = Date.now() + 15_000;
    let tasks = await queue.list('reports');
    while (tasks.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      tasks = await queue.list('reports');
    }
    expect(tasks.map((task) => task.envelope.name)).toEqual(['remind']);
    const status = await scheduler.status();
    expect(status.fires).toBe(1);
  });

  it('refuses a db that does not hold the queue’s tables, with a typed error naming the table', async () => {
    const other: Database = await openSqlite(system, { file: join(dir, 'other.db'), readers: 0 });
    closers.push(() => other.close());
    const opened = openScheduler(system, { db: other, queue, start: false });
    await expect(opened).rejects.toMatchObject({ code: 'SCHEDULE_QUEUE_DATABASE_MISMATCH', table: 'molo_task_queues' });
    await expect(opened).rejects.toThrow(/leave `db` out/);
  });
});
