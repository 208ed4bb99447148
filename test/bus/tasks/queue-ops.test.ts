/**
 * Whole-queue operations on both stores: pause and resume (held by the lease statement, so a
 * second queue handle on the same database sees it at once), purge of what waits (with its
 * idempotency keys), and delete of a queue, refused while tasks are in flight unless forced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTaskWorkers, TaskQueueNotFound, TaskStateConflict } from '../../../src/bus/index.js';
import { sleep, testSystem } from '../../support/systems.js';
import { TASK_BACKENDS, until } from './stores.js';

for (const backend of TASK_BACKENDS) {
  describe(`queue operations on ${backend.name}`, () => {
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());

    it('pause stops every handle taking tasks (enqueues go on); resume wakes the pool and all run', async () => {
      const system = testSystem();
      const queue = await backend.open();
      const other = await backend.open(undefined, { table: queue.tables.queues.replace(/_queues$/, '') });
      await queue.createQueue('q');
      for (let n = 0; n < 3; n++) await queue.enqueue('q', { name: 'work', payload: { n } });
      expect(await queue.pause('q')).toBe(true);
      expect(await queue.pause('q')).toBe(false);
      expect((await other.queueInfo('q')).paused).toBe(true);
      expect(await other.lease('q', 10)).toEqual([]);
      const ran: number[] = [];
      const pool = await startTaskWorkers(system, queue, { queue: 'q', executor: { placement: 'loop', handlers: { work: (payload) => void ran.push((payload as { n: number }).n) } }, pollMs: 50 });
      await queue.enqueue('q', { name: 'work', payload: { n: 3 } });
      await sleep(400);
      expect(ran).toEqual([]);
      expect((await queue.queueInfo('q')).counts.queued).toBe(4);
      expect(await other.resume('q')).toBe(true);
      expect(await other.resume('q')).toBe(false);
      await until(async () => ran.length, (count) => count === 4);
      expect(ran.sort()).toEqual([0, 1, 2, 3]);
      expect((await queue.queueInfo('q')).paused).toBe(false);
      await pool.stop(0);
      await other.close();
      await queue.close();
      await system.shutdown();
    });

    it('purge deletes what waits (and its idempotency keys), leaves taken tasks; dead letters only when asked', async () => {
      const queue = await backend.open();
      await queue.createQueue('q');
      await queue.enqueue('q', { name: 'taken' });
      await queue.enqueue('q', { name: 'doomed', maxRetries: 0 });
      const keyed = await queue.enqueue('q', { name: 'a', idempotencyKey: 'once' });
      await queue.enqueue('q', { name: 'big', payload: { text: 'x'.repeat(300_000) } });
      const [taken] = await queue.lease('q', 1);
      const [doomed] = await queue.lease('q', 1);
      expect([taken!.envelope.name, doomed!.envelope.name]).toEqual(['taken', 'doomed']);
      await queue.settle('q', [{ id: doomed!.envelope.id, leaseToken: doomed!.leaseToken, outcome: { kind: 'failed', reason: 'error', detail: 'boom' } }]);
      expect((await queue.queueInfo('q')).deadLetters).toBe(1);
      expect(await queue.purge('q')).toBe(2);
      const info = await queue.queueInfo('q');
      expect(info.counts.queued).toBe(0);
      expect(info.counts.leased).toBe(1);
      expect(info.deadLetters).toBe(1);
      expect((await queue.get(taken!.envelope.id))?.state).toBe('leased');
      expect(await queue.get(keyed.id)).toBeUndefined();
      expect(await queue.purge('q', { deadLetters: true })).toBe(1);
      expect((await queue.queueInfo('q')).deadLetters).toBe(0);
      // The purged task's key no longer answers "duplicate" with a task that is gone.
      const again = await queue.enqueue('q', { name: 'a', idempotencyKey: 'once' });
      expect(again.duplicate).toBe(false);
      expect(again.id).not.toBe(keyed.id);
      await queue.close();
    });

    it('deleteQueue: refused while a task is taken; with force, the queue and every row of it go', async () => {
      const queue = await backend.open();
      await queue.createQueue('q');
      await queue.createQueue('kept');
      await queue.enqueue('kept', { name: 'stay' });
      await queue.enqueue('q', { name: 'a', idempotencyKey: 'k' });
      await queue.enqueue('q', { name: 'b' });
      await queue.pause('q');
      await queue.resume('q');
      const [taken] = await queue.lease('q', 1);
      await expect(queue.deleteQueue('q')).rejects.toBeInstanceOf(TaskStateConflict);
      expect((await queue.queueInfo('q')).depth).toBe(2);
      await queue.pause('q');
      expect(await queue.deleteQueue('q', { force: true })).toBe(2);
      await expect(queue.queueInfo('q')).rejects.toBeInstanceOf(TaskQueueNotFound);
      expect(await queue.queues()).toEqual(['kept']);
      expect((await queue.queueInfo('kept')).depth).toBe(1);
      // The in-flight worker's settle finds nothing and is skipped.
      await queue.settle('q', [{ id: taken!.envelope.id, leaseToken: taken!.leaseToken, outcome: { kind: 'succeeded' } }]).catch(() => undefined);
      await queue.createQueue('q');
      const info = await queue.queueInfo('q');
      expect(info).toMatchObject({ depth: 0, deadLetters: 0, paused: false });
      expect((await queue.enqueue('q', { name: 'a', idempotencyKey: 'k' })).duplicate).toBe(false);
      await queue.close();
    });
  });
}
