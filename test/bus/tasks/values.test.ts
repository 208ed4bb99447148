/**
 * Issue 28 §2: a handler's return value is stored with its task, and its progress is stored while
 * it runs (the latest value winning), on both stores and on every executor; what cannot be stored
 * (not JSON, over its cap) fails the task permanently with an error naming the cap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTaskWorkers, TaskResultInvalid, type ExecutorSpec, type SqlTaskQueue } from '../../../src/bus/index.js';
import { InvalidBusOption } from '../../../src/bus/errors.js';
import { testSystem } from '../../support/systems.js';
import { handlers } from './fixtures/value-handlers.js';
import { TASK_BACKENDS, until } from './stores.js';

const module = new URL('./fixtures/value-handlers.ts', import.meta.url);
const EXECUTORS: readonly ExecutorSpec[] = [
  { placement: 'loop', handlers },
  { placement: 'thread', module },
  { placement: 'process', module },
];

const finished = (queue: SqlTaskQueue, id: string) =>
  until(
    () => queue.get(id),
    (task) => task?.state === 'succeeded' || task?.state === 'dead-lettered',
  );

for (const backend of TASK_BACKENDS) {
  describe(`task results and progress on ${backend.name}`, () => {
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());

    for (const executor of EXECUTORS) {
      it(`${executor.placement}: the return value is stored; progress is seen while it runs and kept; bad values fail permanently`, async () => {
        const system = testSystem();
        const queue = await backend.open();
        await queue.createQueue('q', { retry: { baseMs: 10 } });
        const pool = await startTaskWorkers(system, queue, { queue: 'q', concurrency: 2, executor, pollMs: 50 });
        const doubled = await queue.enqueue('q', { name: 'double', payload: { n: 21 } });
        const nothing = await queue.enqueue('q', { name: 'nothing' });
        const steps = await queue.enqueue('q', { name: 'steps', payload: { steps: 5_000, holdMs: 600 } });
        expect((await finished(queue, doubled.id))?.result).toEqual({ doubled: 42 });
        const none = await finished(queue, nothing.id);
        expect(none?.state).toBe('succeeded');
        expect(none).not.toHaveProperty('result');
        // Seen while the handler holds, before it returns.
        const running = await until(
          () => queue.get(steps.id),
          (task) => (task?.progress as { step?: number } | undefined)?.step === 5_000,
        );
        // Not finished yet (the start is written in batches, so it may still read `leased`).
        expect(['leased', 'running']).toContain(running?.state);
        expect(running?.progress).toEqual({ step: 5_000, of: 5_000 });
        const done = await finished(queue, steps.id);
        expect(done).toMatchObject({ state: 'succeeded', result: 'done', progress: { step: 5_000, of: 5_000 } });
        expect((await queue.list('q', { state: 'succeeded' })).find((task) => task.envelope.id === steps.id)?.result).toBe('done');

        for (const [name, cap] of [
          ['huge', 'tasks.maxResultChars'],
          ['bigint', 'not JSON'],
          ['badProgress', 'tasks.maxProgressChars'],
        ] as const) {
          const { id } = await queue.enqueue('q', { name, maxRetries: 3 });
          const task = await finished(queue, id);
          expect(task?.state, name).toBe('dead-lettered');
          // Permanent: one attempt, not four.
          expect(task?.envelope.attempts, name).toBe(1);
          const letter = task?.history.at(-1);
          expect(letter?.reason, name).toBe('permanent');
          expect(letter?.detail, name).toContain(TaskResultInvalid.code);
          expect(letter?.detail, name).toContain(cap);
        }
        await pool.stop(0);
        await queue.close();
        await system.shutdown();
      }, 60_000);
    }

    it('settle and reportProgress from outside the pool are held to the same caps; a long result is read back whole by list', async () => {
      const queue = await backend.open();
      await queue.createQueue('q');
      await queue.enqueue('q', { name: 'a' });
      const [task] = await queue.lease('q', 1);
      const { id } = task!.envelope;
      const ack = (result: string) => queue.settle('q', [{ id, leaseToken: task!.leaseToken, outcome: { kind: 'succeeded', result } }]);
      await expect(ack('x'.repeat(70_000))).rejects.toThrow(/tasks\.maxResultChars/);
      await expect(ack('{not json')).rejects.toBeInstanceOf(InvalidBusOption);
      await expect(queue.reportProgress('q', [{ id, leaseToken: task!.leaseToken, progress: JSON.stringify('p'.repeat(5_000)) }])).rejects.toThrow(/tasks\.maxProgressChars/);
      // A stale lease token changes nothing.
      await queue.reportProgress('q', [{ id, leaseToken: task!.leaseToken + 1, progress: '1' }]);
      expect((await queue.get(id))?.progress).toBeUndefined();
      await queue.reportProgress('q', [{ id, leaseToken: task!.leaseToken, progress: '1' }, { id, leaseToken: task!.leaseToken, progress: '2' }]);
      expect((await queue.get(id))?.progress).toBe(2);
      const long = JSON.stringify({ text: 'z'.repeat(60_000) });
      await ack(long);
      const [listed] = await queue.list('q', { state: 'succeeded' });
      expect(listed?.result).toEqual(JSON.parse(long));
      await queue.close();
    });

    it('tables made before tasks kept values (and queues their active bound) get the columns when the queue opens', async () => {
      const queue = await backend.open();
      const prefix = queue.tables.tasks.replace(/_tasks$/, '');
      for (const column of ['result', 'progress']) await backend.db.query(`ALTER TABLE ${queue.tables.tasks} DROP COLUMN ${column}`);
      await backend.db.query(`ALTER TABLE ${queue.tables.queues} DROP COLUMN active_bound`);
      await queue.close();
      const reopened = await backend.open(undefined, { table: prefix });
      await reopened.createQueue('q');
      await reopened.enqueue('q', { name: 'a' });
      const [task] = await reopened.lease('q', 1);
      await reopened.settle('q', [{ id: task!.envelope.id, leaseToken: task!.leaseToken, outcome: { kind: 'succeeded', result: '[1]' } }]);
      expect((await reopened.get(task!.envelope.id))?.result).toEqual([1]);
      await reopened.close();
    });
  });
}
