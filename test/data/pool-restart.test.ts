/**
 * A Postgres restart and a crash, survived by the pool: connections are lost (expected, not a crash
 * to escalate), the pool reports itself unhealthy while it cannot reconnect, and comes back by
 * itself. The supervision tree above it never notices. A throwaway cluster, since the machine's
 * server must not be restarted under other tests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../src/actors/index.js';
import { GenServer, Supervisor, worker } from '../../src/behaviours/index.js';
import { DbError } from '../../src/data/index.js';
import { createPostgresPool, type PostgresDatabase } from '../../src/data/postgres.js';
import { startCluster, type Cluster, restartablePoolConfig } from '../support/pg-cluster.js';
import { eventually, testSystem } from '../support/systems.js';

class Bystander extends GenServer<'ping', 'pong'> {
  override handleCall(): 'pong' {
    return 'pong';
  }
}

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

/** Retries a statement until it succeeds: what a caller does with retryable errors. */
async function untilAnswered(db: PostgresDatabase, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      return (await db.query<{ one: number }>('SELECT 1 AS one', [], { timeoutMs: 1_000 })).rows[0]!.one;
    } catch (error) {
      expect(error).toBeInstanceOf(DbError);
      last = error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`no answer within ${timeoutMs} ms: ${String(last)}`);
}

describe('Postgres pool across server restarts', () => {
  let system: ActorSystem;

  it('survives a restart and a crash without taking down the supervision tree', async () => {
    system = testSystem();
    const root = await Supervisor.start(system, { strategy: 'one_for_one', children: [worker('bystander', () => new Bystander())] });
    const [bystander] = await Supervisor.whichChildren(system, root);
    const db = await createPostgresPool(system, restartablePoolConfig(cluster));
    try {
      expect(await untilAnswered(db, 5_000)).toBe(1);

      await cluster.restart({ mode: 'fast' });
      expect(await untilAnswered(db, 20_000)).toBe(1);
      expect(db.health().healthy).toBe(true);

      await cluster.kill();
      await db.query('SELECT 1').catch(() => undefined);
      await eventually(() => !db.health().healthy, 10_000, 'pool reports itself unhealthy');
      expect(db.health().reason).toBeTruthy();
      await cluster.start();
      expect(await untilAnswered(db, 20_000)).toBe(1);
      await eventually(() => db.health().healthy, 10_000, 'healthy again');

      // Nothing above the pool restarted or died.
      expect(system.isAlive(db.supervisor)).toBe(true);
      expect(system.isAlive(root)).toBe(true);
      expect((await Supervisor.whichChildren(system, root))[0]!.ref).toBe(bystander!.ref);
    } finally {
      await db.close();
      await system.shutdown();
    }
  }, 90_000);
});
