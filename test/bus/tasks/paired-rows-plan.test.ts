/**
 * The plan of the Postgres statements that settle or renew leased tasks by (id, lease_token):
 * with statistics taken while no task was leased (the common case on a busy queue), the planner
 * must still reach each row by its primary key, never by a scan of the (queue, state) index,
 * whose taken range fills with dead entries (the tasks bench fell to 1,200 tasks/s through it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorSystem } from '../../../src/actors/index.js';
import { openTaskQueue } from '../../../src/bus/index.js';
import { pgPairedRows, TAKEN } from '../../../src/bus/tasks/transitions.js';
import { createPostgresPool, type PostgresDatabase } from '../../../src/data/index.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';

let fresh: FreshDatabase;
let system: ActorSystem;
let db: PostgresDatabase;

beforeAll(async () => {
  fresh = freshDatabase('pairplan');
  system = new ActorSystem({ node: 'plan', logger: false });
  db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database });
}, 30_000);
afterAll(async () => {
  await db?.close();
  system?.shutdown();
  fresh?.drop();
});

describe('paired-row updates on Postgres', () => {
  it('reach leased rows by primary key even when statistics say none are taken', async () => {
    const queue = await openTaskQueue(db, {});
    await queue.createQueue('q');
    for (let i = 0; i < 4_000; i += 500) await queue.enqueueMany('q', Array.from({ length: 500 }, (_, k) => ({ name: 'noop', payload: { seq: i + k } })));
    await db.query('ANALYZE molo_task_tasks');
    const leased = await queue.lease('q', 200);
    const plan = await db.query(
      `EXPLAIN UPDATE molo_task_tasks AS t SET finished_at = 1 FROM unnest($2::text[], $3::int8[]) AS v(id, lease_token) WHERE ${pgPairedRows(TAKEN, 2)}`,
      ['q', leased.map((task) => task.envelope.id), leased.map((task) => task.leaseToken)],
    );
    const text = plan.rows.map((row) => String(Object.values(row)[0])).join('\n');
    expect(text).not.toMatch(/molo_task_tasks_state/);
    expect(text).toMatch(/molo_task_tasks_pkey/);
    await queue.close();
  });
});
