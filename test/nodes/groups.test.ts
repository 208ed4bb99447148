/**
 * Process groups across nodes in their own OS processes: joins and leaves seen on every node,
 * members that exit leave, a killed node's members leave everywhere, events to subscribers.
 */
import { describe, expect, it } from 'vitest';
import { mesh, until } from './cluster-child.js';

describe('process groups', () => {
  it('join, leave, members local and cluster-wide, exits and a SIGKILLed node, with events', async () => {
    const [a, b, c] = await mesh(['pga', 'pgb', 'pgc']);
    await a!.run('watchGroup', 'workers');
    const wa = await a!.run<string>('spawn', 'w');
    const wb = await b!.run<string>('spawn', 'w');
    const wc = await c!.run<string>('spawn', 'w');
    const other = await c!.run<string>('spawn', 'other');
    await a!.run('join', 'workers', 'w');
    await b!.run('join', 'workers', 'w');
    await c!.run('join', 'workers', 'w');
    await c!.run('join', 'workers', 'other');
    await c!.run('join', 'workers', 'other'); // twice is once
    const all = [wa, wb, wc, other].sort();
    for (const peer of [a!, b!, c!]) await until(async () => JSON.stringify(await peer.run('members', 'workers')) === JSON.stringify(all));
    expect(await b!.run('metrics')).toContain(`molo_pg_members{node="${b!.name}"} 4`);

    await c!.run('leave', 'workers', 'other');
    for (const peer of [a!, b!]) await until(async () => !(await peer.run<string[]>('members', 'workers')).includes(other));
    await b!.run('kill', 'w');
    for (const peer of [a!, c!]) await until(async () => !(await peer.run<string[]>('members', 'workers')).includes(wb));
    c!.child.kill('SIGKILL');
    await until(async () => JSON.stringify(await a!.run('members', 'workers')) === JSON.stringify([wa]));
    await until(async () => JSON.stringify(await b!.run('members', 'workers')) === JSON.stringify([wa]));

    const events = await a!.run<{ type: string; refs: string[] }[]>('groupEvents');
    const joined = events.filter((event) => event.type === 'pg_join').flatMap((event) => event.refs).sort();
    const left = events.filter((event) => event.type === 'pg_leave').flatMap((event) => event.refs).sort();
    expect(joined).toEqual(all);
    expect(left).toEqual([wb, wc, other].sort());
  });

  it('a node that joins the cluster later learns the existing members, and they learn its own', async () => {
    const [a, b] = await mesh(['lja', 'ljb']);
    const wa = await a!.run<string>('spawn', 'w');
    await a!.run('join', 'g', 'w');
    const [c] = await mesh(['ljc']);
    const wc = await c!.run<string>('spawn', 'w');
    await c!.run('join', 'g', 'w');
    await c!.run('connect', a!.name);
    await until(async () => JSON.stringify(await c!.run('members', 'g')) === JSON.stringify([wa, wc].sort()));
    await until(async () => JSON.stringify(await a!.run('members', 'g')) === JSON.stringify([wa, wc].sort()));
    // b is not connected to c: it sees only what its own links tell it.
    expect(await b!.run('members', 'g')).toEqual([wa]);
  });
});
