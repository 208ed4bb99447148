/**
 * Model tests of the global registry and process groups on two nodes linked over TCP (fast-check:
 * random command sequences against a small reference model, each step waited out on both nodes),
 * and their bad input and caps.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallRequest, type Ref } from '../../src/actors/index.js';
import {
  ClusterLimitReached,
  GlobalNameNotFound,
  GlobalNameTaken,
  InvalidClusterArgument,
  startGlobal,
  startGroups,
  type GlobalRegistry,
  type Node,
  type ProcessGroups,
} from '../../src/nodes/index.js';
import { eventually } from '../support/systems.js';
import { testNode } from './support.js';

const ACTORS = 3;
const NAMES = ['n1', 'n2'];
const GROUPS = ['g1', 'g2'];

interface Side {
  readonly node: Node;
  readonly global: GlobalRegistry;
  readonly groups: ProcessGroups;
  readonly actors: Ref[];
}

async function pair(prefix: string): Promise<[Side, Side]> {
  const sides: Side[] = [];
  for (const name of ['a', 'b']) {
    const node = await testNode(`${prefix}_${name}`);
    const actors = Array.from({ length: ACTORS }, () => node.system.spawn(() => {}));
    sides.push({ node, global: startGlobal(node), groups: startGroups(node), actors });
  }
  await sides[0]!.node.connect(sides[1]!.node.name);
  return sides as [Side, Side];
}

const key = (ref: Ref | undefined): string => (ref === undefined ? '-' : `${ref.node}/${ref.id}`);

type Command =
  | { readonly op: 'register'; readonly side: number; readonly actor: number; readonly name: string }
  | { readonly op: 'unregister'; readonly side: number; readonly name: string }
  | { readonly op: 'join' | 'leave'; readonly side: number; readonly actor: number; readonly group: string }
  | { readonly op: 'kill'; readonly side: number; readonly actor: number };

const side = fc.integer({ min: 0, max: 1 });
const actor = fc.integer({ min: 0, max: ACTORS - 1 });
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ op: fc.constant('register' as const), side, actor, name: fc.constantFrom(...NAMES) }),
  fc.record({ op: fc.constant('unregister' as const), side, name: fc.constantFrom(...NAMES) }),
  fc.record({ op: fc.constantFrom('join' as const, 'leave' as const), side, actor, group: fc.constantFrom(...GROUPS) }),
  fc.record({ op: fc.constant('kill' as const), side, actor }),
);

describe('global registry and process groups against a model', () => {
  it('random register/unregister/join/leave/kill on two nodes: both nodes agree with the model after each step', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 12 }), async (commands) => {
        const sides = await pair(`model${++run}`);
        const names = new Map<string, string>(); // name → actor key
        const groups = new Map<string, Set<string>>(GROUPS.map((group) => [group, new Set()]));
        for (const step of commands) {
          const here = sides[step.side]!;
          if (step.op === 'register') {
            const ref = here.actors[step.actor]!;
            const taken = names.has(step.name) && names.get(step.name) !== key(ref);
            const result = await here.global.register(step.name, ref).then(
              () => 'ok',
              (error: unknown) => error,
            );
            if (taken) expect(result).toBeInstanceOf(GlobalNameTaken);
            else {
              expect(result).toBe('ok');
              names.set(step.name, key(ref));
            }
          } else if (step.op === 'unregister') {
            expect(here.global.unregister(step.name)).toBe(names.has(step.name));
            names.delete(step.name);
          } else if (step.op === 'join' || step.op === 'leave') {
            const ref = here.actors[step.actor]!;
            const members = groups.get(step.group)!;
            if (step.op === 'join') {
              here.groups.join(step.group, ref);
              members.add(key(ref));
            } else {
              expect(here.groups.leave(step.group, ref)).toBe(members.has(key(ref)));
              members.delete(key(ref));
            }
          } else {
            const old = here.actors[step.actor]!;
            here.node.system.exit(old, 'kill');
            here.actors[step.actor] = here.node.system.spawn(() => {});
            for (const [name, holder] of names) if (holder === key(old)) names.delete(name);
            for (const members of groups.values()) members.delete(key(old));
          }
          // Both nodes converge on the model before the next step.
          const expected = JSON.stringify([NAMES.map((name) => names.get(name) ?? '-'), GROUPS.map((group) => [...groups.get(group)!].sort())]);
          await eventually(
            () =>
              sides.every(
                (s) => JSON.stringify([NAMES.map((name) => key(s.global.whereis(name))), GROUPS.map((group) => s.groups.members(group).map(key).sort())]) === expected,
              ),
            5_000,
            `both nodes agree with the model after ${JSON.stringify(step)}`,
          );
        }
        await Promise.all(sides.map((s) => s.node.stop()));
      }),
      { numRuns: 12 },
    );
  }, 60_000);
});

describe('group subscribers and global calls', () => {
  it('an actor subscribed to a group gets pg_join and pg_leave for remote members; a global call reaches the other node', async () => {
    const [a, b] = await pair('sub');
    const events: unknown[] = [];
    const subscriber = a.node.system.spawn((message) => void events.push(message));
    const stop = a.groups.subscribe('g', subscriber);
    b.groups.join('g', b.actors[0]!);
    await eventually(() => events.length === 1);
    b.node.system.exit(b.actors[0]!, 'kill');
    await eventually(() => events.length === 2);
    expect(events).toEqual([
      { type: 'pg_join', group: 'g', refs: [b.actors[0]] },
      { type: 'pg_leave', group: 'g', refs: [b.actors[0]] },
    ]);
    stop();
    b.groups.join('g', b.actors[1]!);
    await eventually(() => a.groups.members('g').length === 1);
    expect(events).toHaveLength(2);

    const echo = b.node.system.spawn((message) => {
      if (message instanceof CallRequest) message.reply(['echo', message.request]);
    });
    await b.global.register('echo', echo);
    await eventually(() => a.global.whereis('echo') !== undefined);
    expect(await a.global.call('echo', 42)).toEqual(['echo', 42]);
  });
});

describe('bad input and caps', () => {
  it('names, refs, options and caps are checked with typed errors', async () => {
    const [a, b] = await pair('bad');
    const local = a.actors[0]!;
    const remote = b.actors[0]!;
    await expect(a.global.register('', local)).rejects.toBeInstanceOf(InvalidClusterArgument);
    await expect(a.global.register('x'.repeat(257), local)).rejects.toBeInstanceOf(InvalidClusterArgument);
    await expect(a.global.register('n', remote)).rejects.toMatchObject({ code: 'NODE_CLUSTER_INVALID_ARGUMENT', argument: 'global ref' });
    const dead = a.node.system.spawn(() => {});
    a.node.system.exit(dead, 'kill');
    await eventually(() => !a.node.system.isAlive(dead));
    await expect(a.global.register('n', dead)).rejects.toBeInstanceOf(InvalidClusterArgument);
    expect(() => a.global.send('nobody', 1)).toThrow(GlobalNameNotFound);
    await expect(a.global.call('nobody', 1)).rejects.toMatchObject({ code: 'NODE_GLOBAL_NAME_NOT_FOUND', globalName: 'nobody' });
    expect(() => a.groups.join('g', remote)).toThrow(InvalidClusterArgument);
    expect(() => a.groups.join('', local)).toThrow(InvalidClusterArgument);

    const capped = await testNode('caps');
    const actors = [capped.system.spawn(() => {}), capped.system.spawn(() => {})];
    expect(() => startGlobal(capped, { maxNames: 0 })).toThrow(/option maxNames: must be an integer in 1\.\.10000000/);
    const global = startGlobal(capped, { maxNames: 1 });
    await global.register('one', actors[0]!);
    await expect(global.register('two', actors[1]!)).rejects.toMatchObject({ code: 'NODE_CLUSTER_LIMIT_REACHED', cap: 'maxNames', limit: 1 });
    const groups = startGroups(capped, { maxGroups: 1, maxMembers: 1 });
    groups.join('g', actors[0]!);
    expect(() => groups.join('g', actors[1]!)).toThrow(ClusterLimitReached);
    expect(() => groups.join('h', actors[0]!)).toThrow(/maxGroups = 1/);
  });
});
