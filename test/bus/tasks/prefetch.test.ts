/**
 * `prefetch`: a thread or process host runs several of its worker's tasks at once, sent together.
 * Each task keeps its own semantics (soft timeout, abort, hard timeout); a hard timeout ends the
 * host and the batch's other runs with it (they fail as for a crash and are retried); the pool's
 * concurrency counts tasks, not hosts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalleeExited, hostsExited, placementHosts, type ActorSystem } from '../../../src/actors/index.js';
import { InvalidBusOption, startTaskWorkers, TaskConcurrencyLimit } from '../../../src/bus/index.js';
import { createEnvelope, TaskHardTimeout, type TaskInput } from '../../../src/bus/tasks/index.js';
import { PlacedExecutor } from '../../../src/bus/tasks/executors/placed.js';
import { sleep, testSystem } from '../../support/systems.js';
import { TASK_BACKENDS, until } from './stores.js';

const handlersModule = new URL('./fixtures/handlers.ts', import.meta.url);
const sqlite = TASK_BACKENDS.find((backend) => backend.name.includes('sqlite'))!;
const task = (input: TaskInput) => createEnvelope({ timeoutSoftMs: 5_000, timeoutHardMs: 10_000, ...input });
const never = new AbortController().signal;

async function withExecutor(placement: 'thread' | 'process', prefetch: number, body: (executor: PlacedExecutor, system: ActorSystem) => Promise<void>): Promise<void> {
  const system = testSystem({ node: 'prefetch' });
  const executor = new PlacedExecutor(system, placement, handlersModule, prefetch);
  try {
    await executor.ready();
    await body(executor, system);
  } finally {
    await executor.close();
    system.shutdown();
    await hostsExited(system);
  }
}

describe.each(['thread', 'process'] as const)('a %s executor with prefetch', (placement) => {
  it('runs up to prefetch tasks at once in one host; one more is refused', async () => {
    await withExecutor(placement, 3, async (executor, system) => {
      const started = performance.now();
      const runs = [600, 600, 600].map((ms) => executor.run(task({ name: 'sleep', payload: ms }), never));
      await expect(executor.run(task({ name: 'noop' }), never)).rejects.toBeInstanceOf(InvalidBusOption);
      await Promise.all(runs);
      // Side by side, not one after another.
      expect(performance.now() - started).toBeLessThan(1_500);
      expect(placementHosts(system)).toHaveLength(1);
    });
  }, 30_000);

  it('a soft timeout or an abort reaches only its own task', async () => {
    await withExecutor(placement, 3, async (executor) => {
      const cancel = new AbortController();
      const outcome = (run: Promise<unknown>): Promise<unknown> => run.then(() => 'ok', (error: Error) => error.message);
      const soft = outcome(executor.run(task({ name: 'awaitAbort', timeoutSoftMs: 200 }), never));
      const aborted = outcome(executor.run(task({ name: 'awaitAbort' }), cancel.signal));
      const bystander = outcome(executor.run(task({ name: 'sleep', payload: 600 }), never));
      setTimeout(() => cancel.abort(new Error('cancelled')), 100);
      expect(await Promise.all([soft, aborted, bystander])).toEqual(['aborted: soft timeout after 200 ms', 'aborted: cancelled', 'ok']);
    });
  }, 30_000);

  it('a hard timeout ends the host: its task is TaskHardTimeout, the others running there fail with it', async () => {
    await withExecutor(placement, 3, async (executor) => {
      const done = executor.run(task({ name: 'sleep', payload: 10_000 }), never);
      await sleep(100);
      const waiting = executor.run(task({ name: 'hang' }), never);
      const spin = executor.run(task({ name: 'spin', timeoutSoftMs: 200, timeoutHardMs: 1_000 }), never);
      const caught = (run: Promise<unknown>): Promise<unknown> => run.then(() => 'ok', (error: unknown) => error);
      const [first, second, third] = await Promise.all([caught(done), caught(waiting), caught(spin)]);
      expect(third).toBeInstanceOf(TaskHardTimeout);
      expect(first).toBeInstanceOf(CalleeExited);
      expect(second).toBeInstanceOf(CalleeExited);
      // One fresh host for the next batch.
      await Promise.all([executor.run(task({ name: 'noop' }), never), executor.run(task({ name: 'noop' }), never)]);
    });
  }, 30_000);
});

describe('a pool with prefetch', () => {
  beforeAll(() => sqlite.setup(), 30_000);
  afterAll(() => sqlite.teardown());

  it('starts ceil(concurrency / prefetch) hosts, keeps concurrency and the shared limit as task counts', async () => {
    const system = testSystem();
    const queue = await sqlite.open();
    await queue.createQueue('many');
    const global = new TaskConcurrencyLimit(5);
    const pool = await startTaskWorkers(system, queue, { queue: 'many', executor: { placement: 'thread', module: handlersModule, prefetch: 4 }, concurrency: 6, global, pollMs: 20 });
    try {
      expect(pool.stats().workers).toBe(2);
      const ids = await queue.enqueueMany('many', Array.from({ length: 40 }, () => ({ name: 'sleep', payload: 30 })));
      let most = 0;
      for (const deadline = Date.now() + 30_000; pool.stats().succeeded < ids.length && Date.now() < deadline; await sleep(5)) {
        most = Math.max(most, pool.stats().running, global.running);
      }
      expect(pool.stats()).toMatchObject({ succeeded: ids.length });
      const states = await until(
        () => Promise.all(ids.map(async ({ id }) => (await queue.get(id))?.state)),
        (all) => all.every((state) => state === 'succeeded'),
      );
      expect(states.every((state) => state === 'succeeded')).toBe(true);
      expect(most).toBeGreaterThan(1);
      expect(most).toBeLessThanOrEqual(5);
      expect(placementHosts(system)).toHaveLength(2);
    } finally {
      await pool.stop(0);
      await queue.close();
      await system.shutdown();
    }
  }, 60_000);

  it('a hard timeout in a batch: that task fails hard-timeout, its batch mates are retried and succeed', async () => {
    const system = testSystem();
    const queue = await sqlite.open();
    await queue.createQueue('mixed', { retry: { baseMs: 100, jitterMs: 0, capMs: 100 } });
    const pool = await startTaskWorkers(system, queue, { queue: 'mixed', executor: { placement: 'process', module: handlersModule, prefetch: 3 }, concurrency: 3, pollMs: 20 });
    try {
      const [spin, ...mates] = await queue.enqueueMany('mixed', [
        { name: 'spin', timeoutSoftMs: 200, timeoutHardMs: 1_500, maxRetries: 0 },
        { name: 'sleep', payload: 1_000 },
        { name: 'sleep', payload: 1_000 },
      ]);
      const record = await until(() => queue.get(spin!.id), (found) => found?.state === 'dead-lettered');
      // With no retry left, the reason is max-retries; the hard timeout is what it says failed.
      expect(record?.history.at(-1)?.detail).toMatch(/^hard-timeout: TaskHardTimeout/);
      const others = await until(
        () => Promise.all(mates.map(({ id }) => queue.get(id))),
        (all) => all.every((found) => found?.state === 'succeeded'),
      );
      expect(others.map((found) => found?.state)).toEqual(['succeeded', 'succeeded']);
      expect(pool.stats().workers).toBe(1);
    } finally {
      await pool.stop(0);
      await queue.close();
      await system.shutdown();
    }
  }, 60_000);
});
