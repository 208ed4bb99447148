/**
 * Issue 28 §2: typed task definitions. The payload is checked at enqueue (nothing enqueued when
 * refused) and again in the host before the handler runs; the handler and the stored result are
 * typed without casts.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { defineTask, InvalidBusOption, startTaskWorkers, TaskPayloadInvalid, type SqlTaskQueue } from '../../../src/bus/index.js';
import { testSystem } from '../../support/systems.js';
import { count, resize } from './fixtures/defined-tasks.js';
import { TASK_BACKENDS, until } from './stores.js';

const module = new URL('./fixtures/defined-tasks.ts', import.meta.url);
const finished = (queue: SqlTaskQueue, id: string) =>
  until(
    () => queue.get(id),
    (task) => task?.state === 'succeeded' || task?.state === 'dead-lettered',
  );

describe('defineTask', () => {
  it('types the payload, the handler and the result', () => {
    expectTypeOf(resize.check).returns.toMatchTypeOf<{ url: string; width: number }>();
    expectTypeOf(count.resultOf).returns.toEqualTypeOf<number | undefined>();
    // @ts-expect-error a payload of the wrong shape does not compile
    void (() => resize.input({ url: 1 }));
    // @ts-expect-error a handler returning the wrong type does not compile
    void (() => count.handle(() => 'text'));
  });

  it('refuses a bad name, both or neither check, and unknown options', () => {
    expect(() => defineTask('bad name', { is: (p): p is number => typeof p === 'number' })).toThrow(/name/);
    expect(() => defineTask('x', {} as never)).toThrow(InvalidBusOption);
    expect(() => defineTask('x', { is: (p: unknown): p is number => true, check: (p: unknown) => p as number } as never)).toThrow(/exactly one/);
    expect(() => defineTask('x', { iss: () => true } as never)).toThrow(/is/);
  });
});

for (const backend of TASK_BACKENDS) {
  describe(`defined tasks on ${backend.name}`, () => {
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());

    it('a refused payload enqueues nothing; a checked one runs in a thread host and its typed result reads back', async () => {
      const system = testSystem();
      const queue = await backend.open();
      await queue.createQueue('images');
      const refused = resize.enqueue(queue, 'images', { url: 'a.png', width: 1.5 });
      await expect(refused).rejects.toBeInstanceOf(TaskPayloadInvalid);
      await expect(count.enqueue(queue, 'images', -1)).rejects.toThrow(/expected a count of 0 or more/);
      expect((await queue.queueInfo('images')).depth).toBe(0);

      const pool = await startTaskWorkers(system, queue, { queue: 'images', executor: { placement: 'thread', module }, pollMs: 50 });
      const { id } = await resize.enqueue(queue, 'images', { url: 'a.png', width: 320 }, { maxRetries: 2 });
      const counted = await queue.enqueue('images', count.input(41));
      const result = resize.resultOf(await finished(queue, id));
      expect(result).toEqual({ key: 'a.png@320' });
      expect(count.resultOf(await finished(queue, counted.id))).toBe(42);
      expect(count.resultOf(await queue.get(id))).toBeUndefined();

      // Enqueued around the definition: refused in the host, permanently (one attempt of three).
      const raw = await queue.enqueue('images', { name: 'resize', payload: { url: 7 }, maxRetries: 2 });
      const failed = await finished(queue, raw.id);
      expect(failed?.state).toBe('dead-lettered');
      expect(failed?.envelope.attempts).toBe(1);
      expect(failed?.history.at(-1)).toMatchObject({ reason: 'permanent' });
      expect(failed?.history.at(-1)?.detail).toContain(TaskPayloadInvalid.code);
      await pool.stop(0);
      await queue.close();
      await system.shutdown();
    }, 60_000);
  });
}
