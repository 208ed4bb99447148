/**
 * A real network partition: two nodes in network namespaces of their own, joined by a veth pair;
 * the pair is taken down (both ends) and brought back. Monitors across it fire with
 * `noconnection`, a name registered on each side meanwhile is resolved by the registry's rule on
 * heal (the earlier registration wins), and the loser is told. The test makes and removes its own
 * namespaces; it is skipped only where `ip netns` is not permitted (not root, no iproute2).
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { sleep } from '../support/systems.js';
import { clusterPeer, until } from './cluster-child.js';
import { SECRET } from './support.js';

const tag = String(process.pid % 100_000);
const ns = [`molo_a_${tag}`, `molo_b_${tag}`] as const;
const veth = [`mva${tag}`, `mvb${tag}`] as const;
const subnet = `10.213.${process.pid % 250}`;
const ip = (...args: string[]): void => void execFileSync('ip', args, { stdio: 'pipe' });
const inNs = (space: string, ...args: string[]): void => ip('netns', 'exec', space, 'ip', ...args);

function netnsPermitted(): boolean {
  const probe = `molo_probe_${tag}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
    return true;
  } catch {
    return false;
  }
}

function removeNamespaces(): void {
  for (const space of ns) {
    try {
      ip('netns', 'del', space);
    } catch {
      // Not made (or already gone).
    }
  }
}

afterEach(removeNamespaces);

describe.skipIf(!netnsPermitted())('partition with network namespaces', () => {
  it('monitors fire with noconnection across a cut veth pair, and the global registry heals by its rule', async () => {
    removeNamespaces();
    ip('netns', 'add', ns[0]);
    ip('netns', 'add', ns[1]);
    ip('link', 'add', veth[0], 'type', 'veth', 'peer', 'name', veth[1]);
    for (const i of [0, 1] as const) {
      ip('link', 'set', veth[i], 'netns', ns[i]);
      inNs(ns[i], 'addr', 'add', `${subnet}.${i + 1}/24`, 'dev', veth[i]);
      inNs(ns[i], 'link', 'set', veth[i], 'up');
      inNs(ns[i], 'link', 'set', 'lo', 'up');
    }
    const a = await clusterPeer('na', SECRET, `${subnet}.1`, ['ip', 'netns', 'exec', ns[0]]);
    const b = await clusterPeer('nb', SECRET, `${subnet}.2`, ['ip', 'netns', 'exec', ns[1]]);
    await a.run('connect', b.name);
    const early = await b.run<string>('spawn', 'early');
    await b.run('register', 'svc', 'early');
    await until(async () => (await a.run('whereis', 'svc')) === early);
    await a.run('spawn', 'watcher');
    await a.run('monitorGlobal', 'svc', 'watcher');
    await sleep(100);

    // The partition: both ends down; nothing is closed, the link just goes silent.
    for (const i of [0, 1] as const) inNs(ns[i], 'link', 'set', veth[i], 'down');
    await until(async () => (await a.run<unknown[]>('downs')).length === 1, 15_000);
    expect(await a.run('downs')).toEqual(['noconnection']);
    await until(async () => (await a.run('whereis', 'svc')) === null && (await b.run<string[]>('nodes')).length === 0, 15_000);
    const late = await a.run<string>('spawn', 'late');
    await a.run('register', 'svc', 'late');
    expect(await a.run('whereis', 'svc')).toBe(late);
    expect(await b.run('whereis', 'svc')).toBe(early);

    // Heal: a redials (it asked for b), and both sides settle on the earlier registration.
    for (const i of [0, 1] as const) inNs(ns[i], 'link', 'set', veth[i], 'up');
    for (const peer of [a, b]) await until(async () => (await peer.run('whereis', 'svc')) === early, 20_000);
    await until(async () => (await a.run<unknown[]>('inbox', 'late')).length === 1);
    expect(await a.run('inbox', 'late')).toEqual([{ type: 'global_name_conflict', name: 'svc', winner: early }]);
    expect(await b.run('inbox', 'early')).toEqual([]);
  }, 60_000);
});
