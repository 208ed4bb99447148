/**
 * The KV sweep as a child of the application's tree, on every backend: its actor drives the sweep
 * of expired keys on the simulated clock; killed, its supervisor starts another and expired keys
 * go on being removed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock, type Ref } from '../../../src/actors/index.js';
import { Supervisor, type ChildSpec } from '../../../src/behaviours/index.js';
import type { KvStore } from '../../../src/data/kv/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { eventuallyAsync, KV_BACKENDS } from './stores.js';

type Sweepable = { sweeperChild(id?: string): ChildSpec };

for (const backend of KV_BACKENDS) {
  describe(`KV sweeper child on ${backend.name}`, () => {
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());

    it('sweeps from its actor; killed and restarted by the tree, it keeps sweeping', async () => {
      const clock = new SimulatedClock();
      const system = testSystem({ clock });
      const opened = await backend.open(clock, { sweepIntervalMs: 1_000 });
      const store = opened.store as KvStore & Sweepable;
      try {
        const root = await Supervisor.start(system, { strategy: 'one_for_one', children: [store.sweeperChild()] });
        const [child] = await Supervisor.whichChildren(system, root);
        expect(child).toMatchObject({ id: 'kv-sweeper', type: 'worker' });
        const first = child!.ref as Ref;

        const fill = async (prefix: string): Promise<void> => {
          for (let i = 0; i < 5; i++) await store.set(`${prefix}${i}`, Buffer.from('v'), { ttlMs: 500 });
        };
        await fill('a');
        expect(await opened.count()).toBe(5);
        await clock.advanceAsync(1_500, () => system.settle());
        await eventuallyAsync(async () => (await opened.count()) === 0, 5_000, 'first keys swept');

        system.exit(first, 'kill');
        await eventually(() => !system.isAlive(first), 5_000, 'killed');
        const restarted = async (): Promise<Ref | undefined> => {
          const [again] = await Supervisor.whichChildren(system, root);
          return typeof again?.ref === 'object' && again.ref !== first && system.isAlive(again.ref) ? again.ref : undefined;
        };
        await eventuallyAsync(async () => (await restarted()) !== undefined, 5_000, 'restarted');

        await fill('b');
        expect(await opened.count()).toBe(5);
        await clock.advanceAsync(1_500, () => system.settle());
        await eventuallyAsync(async () => (await opened.count()) === 0, 5_000, 'later keys swept by the new actor');
        await Supervisor.stop(system, root);
      } finally {
        await opened.close();
      }
    });

    it('the actor is what sweeps: a temporary sweeper child killed and not restarted leaves expired keys in place', async () => {
      const clock = new SimulatedClock();
      const system = testSystem({ clock });
      const opened = await backend.open(clock, { sweepIntervalMs: 1_000 });
      const store = opened.store as KvStore & Sweepable;
      try {
        const root = await Supervisor.start(system, { strategy: 'one_for_one', children: [{ ...store.sweeperChild(), restart: 'temporary' }] });
        const [child] = await Supervisor.whichChildren(system, root);
        system.exit(child!.ref as Ref, 'kill');
        await eventually(() => !system.isAlive(child!.ref as Ref), 5_000, 'killed');
        for (let i = 0; i < 5; i++) await store.set(`k${i}`, Buffer.from('v'), { ttlMs: 500 });
        await clock.advanceAsync(5_000, () => system.settle());
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(await opened.count()).toBe(5);
        // Expired all the same: reads never see them.
        expect(await store.get('k0')).toBeUndefined();
        await Supervisor.stop(system, root);
      } finally {
        await opened.close();
      }
    });
  });
}
