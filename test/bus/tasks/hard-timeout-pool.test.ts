/**
 * A pool whose handler spins forever in a thread host: the hard timeout recycles that worker's host,
 * the run is recorded as a `hard-timeout` failure, and the pool keeps all its workers, which go on
 * to finish the other tasks (issue: "the pool stays full").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTaskWorkers } from '../../../src/bus/index.js';
import { testSystem } from '../../support/systems.js';
import { TASK_BACKENDS, until } from './stores.js';

const handlersModule = new URL('./fixtures/handlers.ts', import.meta.url);
const sqlite = TASK_BACKENDS.find((backend) => backend.name.includes('sqlite'))!;

describe('a thread pool at the hard timeout', () => {
  beforeAll(() => sqlite.setup(), 30_000);
  afterAll(() => sqlite.teardown());

  it('recycles the spinning host, records a hard-timeout failure and keeps every worker', async () => {
    const system = testSystem();
    const queue = await sqlite.open();
    await queue.createQueue('cpu', { retry: { baseMs: 60_000, jitterMs: 0, capMs: 60_000 } });
    const pool = await startTaskWorkers(system, queue, { queue: 'cpu', executor: { placement: 'thread', module: handlersModule }, concurrency: 2, pollMs: 20 });
    try {
      const spin = await queue.enqueue('cpu', { name: 'spin', timeoutSoftMs: 200, timeoutHardMs: 600, maxRetries: 1 });
      const record = await until(() => queue.get(spin.id), (task) => task?.state === 'failed-retryable');
      expect(record?.envelope.attempts).toBe(1);
      expect(record?.history.at(-1)?.reason).toBe('hard-timeout');
      expect(pool.stats().workers).toBe(2);

      // Both workers (one of them on its fresh host) still run tasks.
      const rest = await queue.enqueueMany('cpu', Array.from({ length: 20 }, () => ({ name: 'noop' })));
      const states = await until(
        () => Promise.all(rest.map(async ({ id }) => (await queue.get(id))?.state)),
        (all) => all.every((state) => state === 'succeeded'),
      );
      expect(states.every((state) => state === 'succeeded')).toBe(true);
      expect(pool.stats().workers).toBe(2);
      expect(pool.stats().failed).toBe(1);
    } finally {
      await pool.stop(0);
      await queue.close();
      await system.shutdown();
    }
  }, 60_000);
});
