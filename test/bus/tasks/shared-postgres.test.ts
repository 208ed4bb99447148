/**
 * Several instances on one Postgres database: competing leasers (two pools of connections, many
 * concurrent lease calls) never get the same task, and an enqueue on one instance wakes a waiting
 * pool on another through NOTIFY, well before its poll interval.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorSystem } from '../../../src/actors/index.js';
import { openTaskQueue, startTaskWorkers, type SqlTaskQueue } from '../../../src/bus/index.js';
import { createPostgresPool, type PostgresDatabase } from '../../../src/data/postgres.js';
import { eventually, testSystem } from '../../support/systems.js';
import { nextTaskPrefix, TASK_BACKENDS } from './stores.js';

const backend = TASK_BACKENDS.find((b) => b.name === 'postgres')!;
let system: ActorSystem;
let second: PostgresDatabase;

beforeAll(async () => {
  await backend.setup();
  system = new ActorSystem({ node: 'second', logger: false });
  second = await createPostgresPool(system, { host: backend.pg!.host, port: backend.pg!.port, user: backend.pg!.user, database: backend.pg!.database, min: 4, max: 4 });
  // Every connection (the pools' and their LISTEN sessions) open before the first test: sockets a test sees appear count as its leaks.
  const deadline = Date.now() + 10_000;
  while (second.health().connections < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  for (const queue of await pair()) await queue.close();
}, 30_000);
afterAll(async () => {
  await second.close();
  system.shutdown();
  await backend.teardown();
});

async function pair(): Promise<[SqlTaskQueue, SqlTaskQueue]> {
  const table = nextTaskPrefix();
  return [await openTaskQueue(backend.db, { table }), await openTaskQueue(second, { table })];
}

describe('task queue shared on postgres', () => {
  it('competing leasers never get the same task', async () => {
    const [a, b] = await pair();
    await a.createQueue('q');
    await a.enqueueMany('q', Array.from({ length: 600 }, (_, i) => ({ name: 't', payload: i })));
    const taken: string[] = [];
    const leaser = async (queue: SqlTaskQueue): Promise<void> => {
      for (;;) {
        const tasks = await queue.lease('q', 7);
        if (tasks.length === 0) return;
        taken.push(...tasks.map((task) => task.envelope.id));
      }
    };
    await Promise.all([leaser(a), leaser(a), leaser(a), leaser(b), leaser(b), leaser(b)]);
    expect(taken).toHaveLength(600);
    expect(new Set(taken).size).toBe(600);
    await a.close();
    await b.close();
  });

  it('an enqueue on one instance wakes a pool on another before its poll interval', async () => {
    const [a, b] = await pair();
    await a.createQueue('q');
    const ran: number[] = [];
    const pool = await startTaskWorkers(testSystem(), b, { queue: 'q', pollMs: 30_000, executor: { placement: 'loop', handlers: { t: () => void ran.push(Date.now()) } } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sent = Date.now();
    await a.enqueue('q', { name: 't' });
    await eventually(() => ran.length === 1, 10_000, 'run on the other instance');
    expect(ran[0]! - sent).toBeLessThan(5_000);
    await pool.stop(1_000);
    await a.close();
    await b.close();
  });
});
