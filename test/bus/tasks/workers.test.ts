import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidBusOption,
  PermanentTaskFailure,
  retryDelay,
  resolveRetryPolicy,
  startTaskWorkers,
  TaskConcurrencyLimit,
  taskWorkerGroups,
  taskWorkersChild,
  type TaskHandlers,
  type TaskQueue,
  type TaskRecord,
  type TaskState,
  type TaskWorkers,
} from '../../../src/bus/index.js';
import { Supervisor } from '../../../src/behaviours/index.js';
import { eventually, sleep, testSystem } from '../../support/systems.js';
import { TASK_BACKENDS } from './stores.js';

const running: TaskWorkers[] = [];
afterEach(async () => {
  for (const pool of running.splice(0)) await pool.stop(0);
});

/** The task's record once it reached `state` (settles are written a moment after a pool counts them). */
async function reached(queue: TaskQueue, id: string, state: TaskState): Promise<TaskRecord | undefined> {
  let record = await queue.get(id);
  for (let i = 0; i < 300 && record?.state !== state; i++) record = await sleep(10).then(() => queue.get(id));
  return record;
}

async function start(...args: Parameters<typeof startTaskWorkers>): Promise<TaskWorkers> {
  const pool = await startTaskWorkers(...args);
  running.push(pool);
  return pool;
}

for (const backend of TASK_BACKENDS) {
  describe(`task workers on ${backend.name}`, () => {
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());

    it('V7-3: fails twice then succeeds: attempts 2, backoff delays within 20 % of the schedule', async () => {
      const system = testSystem();
      const queue = await backend.open(undefined, { random: () => 0.5 });
      const retry = { baseMs: 1_000, jitterMs: 100, capMs: 10_000 };
      await queue.createQueue('q', { retry });
      const starts: number[] = [];
      const handlers: TaskHandlers = {
        flaky: () => {
          starts.push(performance.now());
          if (starts.length <= 2) throw new Error(`failure ${starts.length}`);
        },
        doomed: () => {
          throw new PermanentTaskFailure('bad input, never retry');
        },
      };
      await start(system, queue, { queue: 'q', executor: { placement: 'loop', handlers }, concurrency: 2, pollMs: 10 });
      const { id } = await queue.enqueue('q', { name: 'flaky' });
      const doomed = await queue.enqueue('q', { name: 'doomed' });
      await eventually(() => starts.length === 3, 10_000, 'three runs');
      const record = await reached(queue, id, 'succeeded');
      expect(record?.state).toBe('succeeded');
      expect(record?.envelope.attempts).toBe(2);
      const policy = resolveRetryPolicy(retry);
      for (const n of [0, 1]) {
        const planned = retryDelay(n, policy, () => 0.5);
        const seen = starts[n + 1]! - starts[n]!;
        expect(seen, `retry ${n}: planned ${planned} ms, seen ${seen.toFixed(0)} ms`).toBeGreaterThanOrEqual(planned * 0.98);
        expect(seen).toBeLessThanOrEqual(planned * 1.2);
      }
      const [letter] = await queue.deadLetters('q');
      expect(letter?.envelope.id).toBe(doomed.id);
      expect(letter?.reason).toBe('permanent');
      expect(letter?.detail).toContain('bad input, never retry');
      await queue.close();
    });

    it('runs many tasks at the pool concurrency, priorities first; a shared limit caps two pools', async () => {
      const system = testSystem();
      const queue = await backend.open();
      await queue.createQueue('a');
      await queue.createQueue('b');
      let now = 0;
      let peak = 0;
      const order: number[] = [];
      const handlers: TaskHandlers = {
        work: async (payload) => {
          const { p, q } = payload as { p: number; q: string };
          if (q === 'a') order.push(p);
          peak = Math.max(peak, ++now);
          await sleep(5);
          now--;
        },
      };
      await queue.enqueueMany('a', Array.from({ length: 40 }, () => ({ name: 'work', payload: { p: 0, q: 'a' } })));
      await queue.enqueueMany('a', Array.from({ length: 5 }, () => ({ name: 'work', payload: { p: 9, q: 'a' } })), { priority: 9 });
      await queue.enqueueMany('b', Array.from({ length: 40 }, () => ({ name: 'work', payload: { p: 0 } })));
      const global = new TaskConcurrencyLimit(5);
      const executor = { placement: 'loop' as const, handlers };
      const a = await start(system, queue, { queue: 'a', executor, concurrency: 8, global, pollMs: 10 });
      const b = await start(system, queue, { queue: 'b', executor, concurrency: 8, global, pollMs: 10 });
      await eventually(() => a.stats().succeeded === 45 && b.stats().succeeded === 40, 15_000, 'all tasks');
      expect(peak).toBeLessThanOrEqual(5);
      // Queue a's first lease takes its priority-9 tasks before any of the 40 older ones.
      expect(order.slice(0, 5)).toEqual([9, 9, 9, 9, 9]);
      expect(a.stats().workers).toBe(8);
      await queue.close();
    });

    it('bad handlers: a non-Error throw and a handler that never settles are recorded failures', async () => {
      const system = testSystem();
      const queue = await backend.open();
      await queue.createQueue('q');
      const handlers: TaskHandlers = {
        odd: () => {
          throw { not: 'an error' };
        },
        stuck: () => new Promise(() => undefined),
      };
      const pool = await start(system, queue, { queue: 'q', executor: { placement: 'loop', handlers }, concurrency: 2, pollMs: 10 });
      const odd = await queue.enqueue('q', { name: 'odd', maxRetries: 0 });
      const stuck = await queue.enqueue('q', { name: 'stuck', maxRetries: 0, timeoutSoftMs: 50, timeoutHardMs: 100 });
      const missing = await queue.enqueue('q', { name: 'nobody', maxRetries: 0 });
      await eventually(() => pool.stats().failed === 3, 10_000, 'three failures');
      await sleep(100);
      const letters = new Map((await queue.deadLetters('q')).map((letter) => [letter.envelope.id, letter]));
      expect(letters.get(odd.id)?.detail).toContain('TASK_HANDLER_FAILED');
      expect(letters.get(odd.id)?.detail).toContain('{"not":"an error"}');
      expect(letters.get(stuck.id)?.detail).toContain('hard-timeout');
      expect(letters.get(missing.id)?.detail).toContain('TASK_HANDLER_NOT_FOUND');
      expect(pool.stats().workers).toBe(2);
      await queue.close();
    });

    it('cancel aborts a running handler through the heartbeat', async () => {
      const system = testSystem();
      const queue = await backend.open();
      await queue.createQueue('q', { leaseMs: 1_000, heartbeatMs: 50 });
      let aborted = false;
      let started = false;
      const handlers: TaskHandlers = {
        long: (_payload, { signal }) =>
          new Promise((resolve) => {
            started = true;
            signal.addEventListener('abort', () => {
              aborted = true;
              resolve(undefined);
            });
          }),
      };
      await start(system, queue, { queue: 'q', executor: { placement: 'loop', handlers }, concurrency: 1, pollMs: 10 });
      const { id } = await queue.enqueue('q', { name: 'long' });
      await eventually(() => started, 5_000, 'started');
      await reached(queue, id, 'running');
      expect(await queue.cancel(id)).toBe('cancelled');
      await eventually(() => aborted, 5_000, 'handler aborted');
      expect((await queue.get(id))?.state).toBe('cancelled');
      await queue.close();
    });

    it('shutdown drains: finished in time succeed; the rest go back to queued with reason shutdown, not an attempt', async () => {
      const system = testSystem();
      const queue = await backend.open();
      await queue.createQueue('q');
      const handlers: TaskHandlers = {
        quick: () => sleep(20),
        slow: (_payload, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => setTimeout(resolve, 5_000))),
      };
      const pool = await startTaskWorkers(system, queue, { queue: 'q', executor: { placement: 'loop', handlers }, concurrency: 4, pollMs: 10 });
      const quick = await queue.enqueue('q', { name: 'quick' });
      const slow = await queue.enqueue('q', { name: 'slow' });
      await eventually(() => pool.stats().running === 2 || pool.stats().succeeded === 1, 5_000, 'both taken');
      const began = Date.now();
      await pool.stop(300);
      expect(Date.now() - began).toBeLessThan(3_000);
      expect((await queue.get(quick.id))?.state).toBe('succeeded');
      const back = await queue.get(slow.id);
      expect(back?.state).toBe('queued');
      expect(back?.envelope.attempts).toBe(0);
      expect(back?.history.at(-1)?.reason).toBe('shutdown');
      await queue.close();
    });

    it('the dead-letter shutdown policy moves unfinished tasks to the DLQ with reason shutdown', async () => {
      const system = testSystem();
      const queue = await backend.open();
      await queue.createQueue('q', { onShutdown: 'dead-letter' });
      const handlers: TaskHandlers = { slow: () => sleep(2_000) };
      const pool = await startTaskWorkers(system, queue, { queue: 'q', executor: { placement: 'loop', handlers }, concurrency: 1, pollMs: 10 });
      const { id } = await queue.enqueue('q', { name: 'slow' });
      await eventually(() => pool.stats().running === 1, 5_000, 'taken');
      await pool.stop(50);
      expect((await queue.deadLetters('q')).map((letter) => [letter.envelope.id, letter.reason])).toEqual([[id, 'shutdown']]);
      await queue.close();
    });

    it('heartbeats keep a task that outlives its lease; the rate limit spaces starts', async () => {
      const system = testSystem();
      const queue = await backend.open();
      await queue.createQueue('q', { leaseMs: 300, heartbeatMs: 50 });
      const starts: number[] = [];
      const handlers: TaskHandlers = { long: () => sleep(900), tick: () => void starts.push(Date.now()) };
      const pool = await start(system, queue, { queue: 'q', executor: { placement: 'loop', handlers }, concurrency: 4, pollMs: 10, rateLimit: { max: 3, perMs: 600 } });
      const long = await queue.enqueue('q', { name: 'long' });
      await eventually(() => pool.stats().succeeded === 1, 5_000, 'long task');
      const record = await reached(queue, long.id, 'succeeded');
      expect([record?.state, record?.envelope.attempts]).toEqual(['succeeded', 0]);
      await queue.enqueueMany('q', Array.from({ length: 5 }, () => ({ name: 'tick' })));
      await eventually(() => starts.length === 5, 5_000, 'five ticks');
      // The bucket refilled during the long task: three start at once, the next two wait for tokens (200 ms each).
      expect(starts[4]! - starts[0]!).toBeGreaterThanOrEqual(300);
      await queue.close();
    });

    it('a killed fetcher restarts alone, finds its workers again, and the pool keeps working', async () => {
      const system = testSystem();
      const queue = await backend.open();
      await queue.createQueue('q');
      let runs = 0;
      let slowStarted = false;
      const handlers: TaskHandlers = { t: () => void runs++, slow: () => ((slowStarted = true), sleep(300)) };
      const child = taskWorkersChild('pool', queue, { queue: 'q', concurrency: 2, pollMs: 10, executor: { placement: 'loop', handlers } });
      const root = await Supervisor.start(system, { children: [child] });
      await queue.enqueue('q', { name: 't' });
      await eventually(() => runs === 1, 5_000, 'first run');
      const slow = await queue.enqueue('q', { name: 'slow' });
      await eventually(() => slowStarted, 5_000, 'slow task started');
      const first = child.handle.fetcher!;
      system.exit(first, 'kill');
      await eventually(() => child.handle.fetcher !== undefined && !child.handle.fetcher.equals(first), 5_000, 'a new fetcher');
      await queue.enqueueMany('q', [{ name: 't' }, { name: 't' }, { name: 't' }]);
      await eventually(() => runs === 4, 5_000, 'runs after the restart');
      // The run the dead fetcher handed out is settled by the new one, not left to its 60 s lease.
      expect((await reached(queue, slow.id, 'succeeded'))?.state).toBe('succeeded');
      expect(child.handle.stats().workers).toBe(2);
      await Supervisor.stop(system, root);
      await queue.close();
    });

    it('caps: 64 workers per group, 32 groups per supervisor, an unknown queue', async () => {
      const system = testSystem();
      const queue = await backend.open();
      await queue.createQueue('q');
      const executor = { placement: 'loop' as const, handlers: {} };
      await expect(startTaskWorkers(system, queue, { queue: 'q', executor, concurrency: 65 })).rejects.toThrow(/maxWorkersPerGroup/);
      await expect(startTaskWorkers(system, queue, { queue: 'q', executor, concurrency: 65 })).rejects.toBeInstanceOf(InvalidBusOption);
      expect(() => taskWorkerGroups(Array.from({ length: 33 }, (_, i) => ({ id: `g${i}`, queue, options: { queue: 'q', executor } })))).toThrow(/maxGroupsPerSupervisor/);
      await expect(startTaskWorkers(system, queue, { queue: 'nope', executor })).rejects.toThrow(/no task queue named/);
      await queue.close();
    });
  });
}
