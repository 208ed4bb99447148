/**
 * Task leases on the injected clock, on both stores: a worker pool renews its leases on the
 * system's clock, so a SimulatedClock alone decides whether a running task keeps its lease or
 * loses it to another instance; real time passing decides nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import { startTaskWorkers, type TaskHandlers, type TaskWorkers } from '../../../src/bus/index.js';
import { eventually, sleep, testSystem } from '../../support/systems.js';
import { TASK_BACKENDS } from './stores.js';

const running: TaskWorkers[] = [];
afterEach(async () => {
  for (const pool of running.splice(0)) await pool.stop(0);
});

for (const backend of TASK_BACKENDS) {
  describe(`task leases on a simulated clock, ${backend.name}`, () => {
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());

    it('a running task keeps its lease while the clock moves past it: the pool renews on that clock', async () => {
      const clock = new SimulatedClock();
      const system = testSystem({ clock });
      const queue = await backend.open(clock);
      await queue.createQueue('q', { leaseMs: 30_000, heartbeatMs: 10_000 });
      let finish!: () => void;
      const gate = new Promise<void>((resolve) => (finish = resolve));
      let started = 0;
      const handlers: TaskHandlers = {
        slow: async () => {
          started++;
          await gate;
        },
      };
      const pool = await startTaskWorkers(system, queue, { queue: 'q', executor: { placement: 'loop', handlers }, concurrency: 1, pollMs: 20 });
      running.push(pool);
      const { id } = await queue.enqueue('q', { name: 'slow' });
      await eventually(() => started === 1, 5_000, 'task started');
      // Four lease lengths of simulated time, in heartbeat-sized steps with real I/O between them.
      for (let step = 0; step < 12; step++) {
        await clock.advanceAsync(10_000);
        await sleep(30);
      }
      await queue.expireLeases('q');
      // Another instance finds nothing to take: the lease was renewed on the clock.
      expect(await queue.lease('q', 1)).toEqual([]);
      expect((await queue.get(id))?.state).toBe('running');
      finish();
      await eventually(() => pool.stats().succeeded === 1, 5_000, 'task succeeded');
    });

    it('a lease nobody renews expires when the clock passes it, and not in real time', async () => {
      const clock = new SimulatedClock();
      const queue = await backend.open(clock);
      await queue.createQueue('q', { leaseMs: 30_000, heartbeatMs: 10_000 });
      const { id } = await queue.enqueue('q', { name: 'lost' });
      const [taken] = await queue.lease('q', 1);
      expect(taken?.envelope.id).toBe(id);
      await sleep(200);
      await queue.expireLeases('q');
      expect(await queue.lease('q', 1)).toEqual([]);
      clock.advance(30_001);
      await queue.expireLeases('q');
      const [again] = await queue.lease('q', 1);
      expect(again?.envelope.id).toBe(id);
      expect(again?.envelope.attempts).toBeGreaterThan(taken!.envelope.attempts);
    });
  });
}
