/**
 * Issue 28 §2: the testing helper (Oban.Testing's drain_queue and assert_enqueued): a queue run to
 * completion inline under a SimulatedClock, delays and retry backoffs included, and a search of what
 * was enqueued, on both stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import { drainQueue, enqueuedTasks, PermanentTaskFailure, type TaskHandlers } from '../../../src/bus/index.js';
import { TASK_BACKENDS } from './stores.js';

for (const backend of TASK_BACKENDS) {
  describe(`drainQueue and enqueuedTasks on ${backend.name}`, () => {
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());

    it('runs ready, delayed and retried tasks to the end under the simulated clock; follow-ups enqueued by handlers run too', async () => {
      const clock = new SimulatedClock(0);
      const queue = await backend.open(clock);
      await queue.createQueue('mail', { retry: { baseMs: 60_000 } });
      let flaky = 0;
      const sent: string[] = [];
      const handlers: TaskHandlers = {
        send: (payload) => {
          sent.push((payload as { to: string }).to);
          return { ok: true };
        },
        flaky: () => {
          if (++flaky < 3) throw new Error(`attempt ${flaky} fails`);
          return flaky;
        },
        never: () => {
          throw new PermanentTaskFailure('no such user');
        },
        fanOut: async () => {
          await queue.enqueue('mail', { name: 'send', payload: { to: 'follow-up' } });
        },
      };
      await queue.enqueue('mail', { name: 'send', payload: { to: 'ada', tags: ['welcome', 'new'] } });
      await queue.enqueue('mail', { name: 'send', payload: { to: 'later' }, runAt: clock.wallNow() + 3_600_000 });
      const flakyTask = await queue.enqueue('mail', { name: 'flaky' });
      await queue.enqueue('mail', { name: 'never' });
      await queue.enqueue('mail', { name: 'fanOut' });

      expect((await enqueuedTasks(queue, 'mail', { name: 'send' })).map((t) => (t.envelope.payload as { to: string }).to)).toEqual(['ada', 'later']);
      expect(await enqueuedTasks(queue, 'mail', { payload: { tags: ['welcome', 'new'] } })).toHaveLength(1);
      expect(await enqueuedTasks(queue, 'mail', { payload: { tags: ['welcome'] } })).toHaveLength(0);
      expect(await enqueuedTasks(queue, 'mail', { payload: { to: 'nobody' } })).toHaveLength(0);

      // Without the clock only what is ready runs: the delayed send and flaky's retries wait.
      const now = await drainQueue(queue, 'mail', handlers);
      expect(now).toMatchObject({ runs: 5, succeeded: 3, failed: 2, deadLettered: 1, truncated: false });
      expect(sent.sort()).toEqual(['ada', 'follow-up']);
      expect(await enqueuedTasks(queue, 'mail')).toHaveLength(2);

      const rest = await drainQueue(queue, 'mail', handlers, { clock });
      expect(rest).toMatchObject({ runs: 3, succeeded: 2, failed: 1, deadLettered: 0, truncated: false });
      expect(sent).toContain('later');
      expect(clock.now()).toBeGreaterThanOrEqual(3_600_000);
      expect((await queue.get(flakyTask.id))?.result).toBe(3);
      expect(await enqueuedTasks(queue, 'mail')).toEqual([]);
      await queue.close();
    });

    it('maxRuns ends a drain whose handler enqueues forever, and says so', async () => {
      const queue = await backend.open(new SimulatedClock(0));
      await queue.createQueue('loop');
      await queue.enqueue('loop', { name: 'again' });
      const handlers: TaskHandlers = { again: async () => void (await queue.enqueue('loop', { name: 'again' })) };
      const result = await drainQueue(queue, 'loop', handlers, { maxRuns: 25, batch: 10 });
      expect(result).toMatchObject({ runs: 25, succeeded: 25, truncated: true });
      await expect(drainQueue(queue, 'loop', {}, { maxRuns: 0 })).rejects.toThrow(/drainQueue\.maxRuns/);
      await expect(drainQueue(queue, 'loop', {}, { maxRun: 5 } as never)).rejects.toThrow(/maxRuns/);
      await queue.close();
    });
  });
}
