/**
 * The global registry across nodes in their own OS processes: a name held once cluster-wide,
 * freed when its holder exits or its node dies, and, after a partition (the link cut inside the
 * transport), a conflicting registration resolved by the rule (earlier registration wins) with
 * the loser told.
 */
import { describe, expect, it } from 'vitest';
import { sleep } from '../support/systems.js';
import { clusterPeer, mesh, until } from './cluster-child.js';
import { SECRET } from './support.js';

describe('global registry', () => {
  it('a name is held once cluster-wide, reachable from every node, freed when its holder exits or its node is killed', async () => {
    const [a, b, c] = await mesh(['ga', 'gb', 'gc']);
    const holder = await a!.run<string>('spawn', 'h');
    await b!.run('spawn', 'rival');
    await a!.run('register', 'leader', 'h');
    for (const peer of [a!, b!, c!]) await until(async () => (await peer.run('whereis', 'leader')) === holder);
    await expect(b!.run('register', 'leader', 'rival')).rejects.toMatchObject({ code: 'NODE_GLOBAL_NAME_TAKEN' });
    await expect(c!.run('globalSend', 'nobody', 1)).rejects.toMatchObject({ code: 'NODE_GLOBAL_NAME_NOT_FOUND' });
    await c!.run('globalSend', 'leader', 'hello from c');
    await until(async () => (await a!.run<unknown[]>('inbox', 'h')).includes('hello from c'));

    await a!.run('kill', 'h');
    for (const peer of [a!, b!, c!]) await until(async () => (await peer.run('whereis', 'leader')) === null);
    // Free again: b takes it; then b's node is killed and the others drop it.
    const rival = await b!.run<string>('spawn', 'rival2');
    await b!.run('register', 'leader', 'rival2');
    await until(async () => (await c!.run('whereis', 'leader')) === rival);
    b!.child.kill('SIGKILL');
    for (const peer of [a!, c!]) await until(async () => (await peer.run('whereis', 'leader')) === null);
  });

  it('concurrent registrations of one name: exactly one wins everywhere (5 races)', async () => {
    const [a, b, c] = await mesh(['ra', 'rb', 'rc']);
    for (let race = 0; race < 5; race++) {
      const refs = await Promise.all([a!, b!, c!].map((peer) => peer.run<string>('spawn', `x${race}`)));
      const results = await Promise.allSettled([a!, b!, c!].map((peer) => peer.run('register', `race${race}`, `x${race}`)));
      const winners = results.filter((result) => result.status === 'fulfilled');
      expect(winners).toHaveLength(1);
      for (const result of results) if (result.status === 'rejected') expect((result.reason as { code: string }).code).toBe('NODE_GLOBAL_NAME_TAKEN');
      const winner = refs[results.indexOf(winners[0]!)];
      for (const peer of [a!, b!, c!]) await until(async () => (await peer.run('whereis', `race${race}`)) === winner);
    }
  });

  it('partition heal: the same name registered on both sides goes to the earlier registration; the loser is told', async () => {
    const a = await clusterPeer('pa', SECRET);
    const b = await clusterPeer('pb', SECRET);
    await a.run('connect', b.name);
    await until(async () => (await b.run<string[]>('nodes')).length === 1);
    // Cut the link inside the transport (a stops redialling; b never dialled).
    await a.run('disconnect', b.name);
    await until(async () => (await b.run<string[]>('nodes')).length === 0 && (await a.run<string[]>('nodes')).length === 0);
    const early = await b.run<string>('spawn', 'early');
    const late = await a.run<string>('spawn', 'late');
    await b.run('register', 'leader', 'early');
    await sleep(20);
    await a.run('register', 'leader', 'late');
    expect(await a.run('whereis', 'leader')).toBe(late);
    expect(await b.run('whereis', 'leader')).toBe(early);

    await a.run('connect', b.name);
    for (const peer of [a, b]) await until(async () => (await peer.run('whereis', 'leader')) === early);
    await until(async () => (await a.run<unknown[]>('inbox', 'late')).length === 1);
    expect(await a.run('inbox', 'late')).toEqual([{ type: 'global_name_conflict', name: 'leader', winner: early }]);
    expect(await b.run('inbox', 'early')).toEqual([]);
    expect(await a.run('globalStats')).toMatchObject({ names: 1, lost: 1 });
    expect(await a.run('metrics')).toContain(`molo_global_lost_total{node="${a.name}"} 1`);
    expect(await b.run('metrics')).toContain(`molo_global_names{node="${b.name}"} 1`);
    // The loser can no longer be reached by the name; the winner is, from both sides.
    await a.run('globalSend', 'leader', 'to the winner');
    await until(async () => (await b.run<unknown[]>('inbox', 'early')).includes('to the winner'));
  });
});
