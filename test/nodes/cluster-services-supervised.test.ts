/**
 * The cluster services run under each node's `molo.cluster_sup`: visible in the tree, and a
 * service actor that is killed is started again by that supervisor under its name, with what it
 * knew intact (its state lives in the service) and peers re-synced by its hello. Real nodes over TCP.
 */
import { describe, expect, it } from 'vitest';
import type { Ref } from '../../src/actors/index.js';
import { Supervisor } from '../../src/behaviours/index.js';
import { CLUSTER_SERVICES_NAME, GLOBAL_NAME, GROUPS_NAME, startGlobal, startGroups } from '../../src/nodes/index.js';
import { eventuallyAsync } from '../data/kv/stores.js';
import { eventually } from '../support/systems.js';
import { testNode } from './support.js';

const sameActor = (a: Ref | undefined, b: Ref | undefined): boolean => a !== undefined && b !== undefined && a.node === b.node && a.id === b.id;

describe('cluster services under molo.cluster_sup', () => {
  it('killed, the global registry and process groups are restarted with their names, state and peers intact', async () => {
    const a = await testNode('sup_a');
    const b = await testNode('sup_b');
    try {
      await a.connect(b.name);
      const [ga, gb] = [startGlobal(a), startGlobal(b)];
      const [pa, pb] = [startGroups(a), startGroups(b)];
      const supervisor = a.system.whereis(CLUSTER_SERVICES_NAME)!;
      expect(supervisor).toBeDefined();
      // After the node's own children (its net kernel and its links).
      await eventuallyAsync(async () => (await Supervisor.whichChildren(a.system, supervisor)).length === 4, 5_000, 'both services supervised');
      expect((await Supervisor.whichChildren(a.system, supervisor)).map((child) => child.id).sort()).toEqual(['global', 'net_kernel', 'node_links', 'pg']);

      const holder = b.system.spawn(() => {});
      const member = b.system.spawn(() => {});
      await gb.register('leader', holder);
      pb.join('workers', member);
      await eventually(() => sameActor(ga.whereis('leader'), holder) && pa.members('workers').length === 1, 10_000, 'a learns b state');

      for (const name of [GLOBAL_NAME, GROUPS_NAME]) {
        const first = a.system.whereis(name)!;
        a.system.exit(first, 'kill');
        await eventually(() => {
          const again = a.system.whereis(name);
          return again !== undefined && again.id !== first.id;
        }, 5_000, `${name} restarted`);
      }
      // What a knew is still there, and the restarted actors serve peers: new state crosses both ways.
      expect(sameActor(ga.whereis('leader'), holder)).toBe(true);
      expect(pa.members('workers')).toHaveLength(1);
      const later = a.system.spawn(() => {});
      await ga.register('second', later);
      pa.join('workers', later);
      await eventually(() => sameActor(gb.whereis('second'), later) && pb.members('workers').length === 2, 10_000, 'b learns a later state');
      const another = b.system.spawn(() => {});
      await gb.register('third', another);
      await eventually(() => sameActor(ga.whereis('third'), another), 10_000, 'a learns b later state through the restarted actor');
      expect((await Supervisor.status(a.system, supervisor)).restartsInWindow).toBe(2);

      // Stopped, a service leaves the tree (and is not restarted).
      pa.stop();
      await eventuallyAsync(async () => (await Supervisor.whichChildren(a.system, supervisor)).map((child) => child.id).join() === 'net_kernel,node_links,global', 5_000, 'pg gone from the tree');
      expect(a.system.whereis(GROUPS_NAME)).toBeUndefined();
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 30_000);

  it('a service stopped and started again at once runs under the supervisor again, with peers re-synced', async () => {
    const a = await testNode('sup_again_a');
    const b = await testNode('sup_again_b');
    await a.connect(b.name);
    startGlobal(a).stop();
    const running = startGlobal(a);
    await eventually(() => a.system.whereis(GLOBAL_NAME) !== undefined, 5_000, 'the second one running');
    running.stop();
    const ga = startGlobal(a);
    const gb = startGlobal(b);
    const supervisor = a.system.whereis(CLUSTER_SERVICES_NAME)!;
    await eventuallyAsync(async () => (await Supervisor.whichChildren(a.system, supervisor)).some((child) => child.id === 'global' && typeof child.ref === 'object'), 5_000, 'the new global supervised');
    const holder = b.system.spawn(() => {});
    await gb.register('again', holder);
    await eventually(() => sameActor(ga.whereis('again'), holder), 10_000, 'a learns b state through the new service');
  });

  it('a second service of a kind on one node is refused at once, naming the name it would take', async () => {
    const a = await testNode('sup_twice');
    try {
      startGlobal(a);
      expect(() => startGlobal(a)).toThrow(expect.objectContaining({ code: 'ACTOR_NAME_TAKEN' }));
    } finally {
      await a.stop();
    }
  });
});
