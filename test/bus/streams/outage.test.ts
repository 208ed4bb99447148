/**
 * A Postgres store whose server goes away (a throwaway cluster, killed and started again): the
 * store reports unhealthy, calls fail with the database's errors (nothing resolves that did not
 * commit), and once the server is back everything resumes with no gap in sequences and no lost
 * ack; a StreamConsumer actor rides it out (store failures retried, wake-ups resynced).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenServer } from '../../../src/behaviours/index.js';
import { openStreams, StreamConsumer } from '../../../src/bus/index.js';
import { createPostgresPool } from '../../../src/data/postgres.js';
import { startCluster, type Cluster, restartablePoolConfig } from '../../support/pg-cluster.js';
import { eventually, testSystem } from '../../support/systems.js';

let cluster: Cluster;
beforeAll(async () => {
  // The throwaway cluster defaults to synchronous_commit=off (fast tests); a kill then loses the last
  // commits by design of that setting, which is not what this test is about.
  cluster = await startCluster({ settings: { synchronous_commit: 'on' } });
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

async function retry<T>(fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe('stream store across a Postgres outage', () => {
  it('reports unhealthy, then resumes with no gap and no lost ack', async () => {
    const system = testSystem();
    const db = await createPostgresPool(system, restartablePoolConfig(cluster));
    const store = await openStreams(db, { pollIntervalMs: 100 });
    try {
      await store.createStream('s');
      await store.createConsumer('s', 'direct');
      const handled = new Set<number>();
      const actor = await StreamConsumer.start(system, { store, stream: 's', consumer: 'actor', pollWaitMs: 200, maxStoreFailures: 1_000, handler: (d) => void handled.add(d.seq) });
      for (let i = 0; i < 100; i++) await store.publish('s', Buffer.from(`before-${i}`));
      const first = await store.fetch('s', 'direct', { batch: 50 });
      await Promise.all(first.map((d) => d.ack()));
      await eventually(() => handled.size === 100, 20_000, 'actor caught up');

      await cluster.kill();
      await store.publish('s', Buffer.from('lost')).then(
        () => expect.fail('a publish resolved with the server down'),
        () => undefined,
      );
      await eventually(() => !store.health().healthy, 10_000, 'store reports unhealthy');
      expect(store.health().reason).toBeTruthy();

      await cluster.start();
      const after = await retry(() => store.publish('s', Buffer.from('after')));
      expect(after.seq).toBe(101);
      await eventually(() => store.health().healthy, 10_000, 'healthy again');
      for (let i = 0; i < 20; i++) await store.publish('s', Buffer.from(`later-${i}`));

      // No lost ack: the 50 acked before the outage never come back.
      expect(await store.consumerInfo('s', 'direct')).toMatchObject({ ackFloor: 50, pending: 0 });
      const rest = await store.fetch('s', 'direct', { batch: 200 });
      expect(rest.map((d) => d.seq)).toEqual(Array.from({ length: 71 }, (_, i) => i + 51));
      // No gap, and the actor got everything.
      expect((await store.streamInfo('s')).lastSeq).toBe(121);
      await eventually(() => handled.size === 121, 30_000, 'actor resumed');
      await GenServer.stop(system, actor, 'shutdown');
    } finally {
      await store.close();
      await db.close();
      await system.shutdown();
    }
  }, 120_000);
});
