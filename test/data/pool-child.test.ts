/**
 * A Postgres database as a child of the application's tree: its connections' supervisor sits in
 * the tree, a kill of it is restarted by the tree's rules with the pool serving on, and the tree's
 * stop takes its connections down in order.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ActorSystem, Ref } from '../../src/actors/index.js';
import { Supervisor } from '../../src/behaviours/index.js';
import { postgresChild, type PostgresDatabase } from '../../src/data/index.js';
import { freshDatabase, psql, type FreshDatabase } from '../support/pg.js';
import { eventually, testSystem } from '../support/systems.js';

let fresh: FreshDatabase;
let system: ActorSystem;
const opened: PostgresDatabase[] = [];

beforeAll(() => {
  fresh = freshDatabase('poolchild');
});
afterAll(() => fresh?.drop());
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
  await system?.shutdown();
});

function backends(app: string): number {
  return Number(psql(`SELECT count(*) FROM pg_stat_activity WHERE application_name = '${app}'`).trim());
}

describe('postgresChild', () => {
  it('is a supervisor child of the app tree; killed, the tree restarts it and the pool keeps serving', async () => {
    system = testSystem();
    const spec = postgresChild(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, name: 'app', min: 2, max: 4, applicationName: 'molo_child_test' });
    const db = spec.database;
    opened.push(db);
    const root = await Supervisor.start(system, { strategy: 'one_for_one', intensity: 3, periodMs: 5_000, children: [spec] });
    expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);

    const [child] = await Supervisor.whichChildren(system, root);
    expect(child).toMatchObject({ id: 'database', type: 'supervisor' });
    const first = child!.ref as Ref;
    expect(first).toBe(db.supervisor);
    await eventually(() => backends('molo_child_test') === 2, 5_000, 'two connections');
    expect((await Supervisor.whichChildren(system, first)).length).toBe(2);

    system.exit(first, 'kill');
    await eventually(() => !system.isAlive(first), 5_000, 'killed');
    // The tree starts a new supervisor; the pool reconnects through it and serves on.
    await eventually(() => db.supervisor !== first && system.isAlive(db.supervisor), 5_000, 'restarted');
    const [again] = await Supervisor.whichChildren(system, root);
    expect(again!.ref).toBe(db.supervisor);
    expect((await db.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    await eventually(() => db.health().healthy && db.health().connections === 2, 5_000, 'two connections again');
    expect((await Supervisor.whichChildren(system, db.supervisor)).length).toBe(2);

    // Stopping the tree stops the connections: none is left on the server.
    await Supervisor.stop(system, root);
    await eventually(() => backends('molo_child_test') === 0, 5_000, 'connections closed with the tree');
  });

  it('refuses an unknown option key, naming the nearest', () => {
    system = testSystem();
    expect(() => postgresChild(system, { host: fresh.host }, { idd: 'x' } as never)).toThrow(/postgresChild\.idd.*did you mean id/);
  });

  it('a first connection refused for good fails the child start, and so the tree start', async () => {
    system = testSystem();
    const spec = postgresChild(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: 'molo_no_such_database_here', name: 'missing' });
    opened.push(spec.database);
    const failure = await Supervisor.start(system, { strategy: 'one_for_one', children: [spec] }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(String((failure as Error).message) + String((failure as { reason?: unknown }).reason)).toMatch(/molo_no_such_database_here|does not exist|3D000/);
  });
});
