/**
 * Registration times that come from the wire are checked before the conflict rule reads them:
 * a peer announcing `-1`, NaN or a far-future time for a name another node holds takes nothing,
 * and every node agrees on one holder. Equal times (injected clocks) are broken by the node name
 * on every node alike. Real nodes over TCP; the forger sends raw service messages by name.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Ref, systemClock, type Clock } from '../../src/actors/index.js';
import { GLOBAL_NAME, globalWinner, startGlobal, type GlobalEntry, type GlobalRegistry, type Node } from '../../src/nodes/index.js';
import { eventually } from '../support/systems.js';
import { testNode } from './support.js';

const sameActor = (a: Ref | undefined, b: Ref | undefined): boolean => a !== undefined && b !== undefined && a.node === b.node && a.id === b.id;

describe('global registry: registration times from the wire', () => {
  it('-1, NaN and far-future times take no name; all nodes agree on one holder', async () => {
    const [a, b, c] = [await testNode('ta'), await testNode('tb'), await testNode('tc')];
    await a.connect(b.name);
    await a.connect(c.name);
    await b.connect(c.name);
    const globals = new Map<Node, GlobalRegistry>([a, b, c].map((node) => [node, startGlobal(node)]));
    const holder = c.system.spawn(() => {});
    const forger = b.system.spawn(() => {});
    const cases: [string, number][] = [
      ['neg', -1],
      ['nan', Number.NaN],
      ['inf', Number.NEGATIVE_INFINITY],
      ['future', Date.now() + 24 * 3600_000],
    ];
    for (const [name] of cases) await globals.get(c)!.register(name, holder);
    await eventually(() => [a, b].every((node) => cases.every(([name]) => sameActor(globals.get(node)!.whereis(name), holder))), 10_000, 'names known');

    for (const [name, at] of cases) {
      // b announces its own actor for the name, with the time it chose, to every other node.
      for (const to of [a, c]) b.sendNamed(GLOBAL_NAME, to.name, ['add', b.name, [name, forger, at]]);
    }
    // And a sync (b's whole state) with a bad time: refused the same way.
    for (const to of [a, c]) b.sendNamed(GLOBAL_NAME, to.name, ['sync', b.name, [['neg', forger, -5]]]);
    for (const to of [a, c]) await b.callNamed(GLOBAL_NAME, to.name, ['noop', b.name], 10_000);

    const disagreements: string[] = [];
    for (const [name] of cases) {
      for (const node of [a, b, c]) if (!sameActor(globals.get(node)!.whereis(name), holder)) disagreements.push(`${name} on ${node.name}`);
    }
    expect(disagreements).toEqual([]);
    expect(globals.get(c)!.stats()).toMatchObject({ lost: 0 });
    // Each refused entry is counted where it arrived: 4 adds and a sync entry on a and on c.
    expect(globals.get(a)!.stats().refused).toBe(5);
    expect(globals.get(c)!.stats().refused).toBe(5);
  }, 30_000);

  it('equal registration times (injected clocks): the smaller node name wins on every node', async () => {
    const fixedWall = Date.now() - 60_000;
    const clock: Clock = { ...systemClock, wallNow: () => fixedWall };
    const p = await testNode('eq_p', { system: { logger: false, clock } });
    const q = await testNode('eq_q', { system: { logger: false, clock } });
    const [gp, gq] = [startGlobal(p), startGlobal(q)];
    const [hp, hq] = [p.system.spawn(() => {}), q.system.spawn(() => {})];
    // Apart (never linked), each gives out the name at the same instant by its clock.
    await gp.register('tie', hp);
    await gq.register('tie', hq);
    expect(gp.entries()[0]!.at).toBe(fixedWall);
    expect(gq.entries()[0]!.at).toBe(fixedWall);
    await p.connect(q.name);
    await eventually(() => sameActor(gp.whereis('tie'), hp) && sameActor(gq.whereis('tie'), hp), 10_000, 'p holds tie on both');
    expect(gq.stats()).toMatchObject({ lost: 1, conflicts: 1 });
  }, 30_000);

  it('a clock ahead within maxClockDriftMs is accepted; past it, refused', async () => {
    const ahead: Clock = { ...systemClock, wallNow: () => Date.now() + 30_000 };
    const p = await testNode('dr_p');
    const q = await testNode('dr_q', { system: { logger: false, clock: ahead } });
    const strict = await testNode('dr_s');
    const [gp, gq, gs] = [startGlobal(p), startGlobal(q), startGlobal(strict, { maxClockDriftMs: 5_000 })];
    await q.connect(p.name);
    await q.connect(strict.name);
    await gq.register('ahead', q.system.spawn(() => {}));
    await eventually(() => gp.whereis('ahead') !== undefined, 10_000, 'p accepts a clock 30 s ahead (default drift 60 s)');
    await eventually(() => gs.stats().refused === 1, 10_000, 'a node allowing 5 s refuses it');
    expect(gs.whereis('ahead')).toBeUndefined();
  }, 30_000);

  it('the rule is a total order: whichever order two entries meet in, the same one wins', () => {
    const entry = fc.record({
      at: fc.integer({ min: 0, max: 3 }),
      node: fc.constantFrom('n1@h:1', 'n2@h:1'),
      id: fc.integer({ min: 1, max: 2 }),
      creation: fc.integer({ min: 1, max: 2 }),
    }).map(({ at, node, id, creation }): GlobalEntry => ({ name: 'x', ref: new Ref(node, id, creation), at }));
    const key = (won: GlobalEntry): string => `${won.at}/${won.ref.node}/${won.ref.id}/${won.ref.creation}`;
    fc.assert(
      fc.property(entry, entry, entry, (a, b, c) => {
        expect(key(globalWinner(a, b))).toBe(key(globalWinner(b, a)));
        // Three entries met in any order end on one winner.
        const orders = [[a, b, c], [c, b, a], [b, c, a], [a, c, b]].map(([x, y, z]) => key(globalWinner(globalWinner(x!, y!), z!)));
        expect(new Set(orders).size).toBe(1);
      }),
    );
  });
});
