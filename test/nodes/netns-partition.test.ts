/**
 * A real network partition: two nodes in network namespaces of their own, joined by a veth pair;
 * the pair is taken down (both ends) and brought back. Monitors across it fire with
 * `noconnection`, a name registered on each side meanwhile is resolved by the registry's rule on
 * heal (the earlier registration wins), and the loser is told. The test makes and removes its own
 * namespaces; it is skipped only where `ip netns` is not permitted (not root, no iproute2).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sleep } from '../support/systems.js';
import { clusterPeer, until } from './cluster-child.js';
import { namespacePair, netnsPermitted } from './netns.js';
import { SECRET } from './support.js';

// Interface names are at most 15 characters: a two-letter label and the pid's last five digits.
const pair = namespacePair('gl', 213);
afterEach(() => pair.remove());

describe.skipIf(!netnsPermitted('gl'))('partition with network namespaces', () => {
  it('monitors fire with noconnection across a cut veth pair, and the global registry heals by its rule', async () => {
    pair.create();
    const a = await clusterPeer('na', SECRET, pair.address[0], pair.wrap(0));
    const b = await clusterPeer('nb', SECRET, pair.address[1], pair.wrap(1));
    await a.run('connect', b.name);
    const early = await b.run<string>('spawn', 'early');
    await b.run('register', 'svc', 'early');
    await until(async () => (await a.run('whereis', 'svc')) === early);
    await a.run('spawn', 'watcher');
    await a.run('monitorGlobal', 'svc', 'watcher');
    await sleep(100);

    // The partition: both ends down; nothing is closed, the link just goes silent.
    pair.cut();
    await until(async () => (await a.run<unknown[]>('downs')).length === 1, 15_000);
    expect(await a.run('downs')).toEqual(['noconnection']);
    await until(async () => (await a.run('whereis', 'svc')) === null && (await b.run<string[]>('nodes')).length === 0, 15_000);
    const late = await a.run<string>('spawn', 'late');
    await a.run('register', 'svc', 'late');
    expect(await a.run('whereis', 'svc')).toBe(late);
    expect(await b.run('whereis', 'svc')).toBe(early);

    // Heal: a redials (it asked for b), and both sides settle on the earlier registration.
    pair.heal();
    for (const peer of [a, b]) await until(async () => (await peer.run('whereis', 'svc')) === early, 20_000);
    await until(async () => (await a.run<unknown[]>('inbox', 'late')).length === 1);
    expect(await a.run('inbox', 'late')).toEqual([{ type: 'global_name_conflict', name: 'svc', winner: early }]);
    expect(await b.run('inbox', 'early')).toEqual([]);
  }, 60_000);
});
