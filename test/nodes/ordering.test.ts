/**
 * fast-check: random interleavings of sends among actors on 3 nodes (3 systems in this process,
 * linked over real TCP) deliver every message exactly once and, per (sender, receiver) pair, in the
 * order sent (Erlang's guarantee).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Ref } from '../../src/actors/index.js';
import { eventually, sleep } from '../support/systems.js';
import { testNode } from './support.js';

interface Delivery {
  readonly from: string;
  readonly seq: number;
}

const ACTORS_PER_NODE = 2;

describe('ordering across 3 nodes', () => {
  it('per-pair order holds and nothing is delivered twice or lost', async () => {
    const nodes = await Promise.all(['a', 'b', 'c'].map((name) => testNode(name)));
    for (const node of nodes) for (const other of nodes) if (other !== node) await node.connect(other.name);
    const received = new Map<string, Delivery[]>();
    const actors: Ref[] = [];
    for (const node of nodes) {
      for (let i = 0; i < ACTORS_PER_NODE; i++) {
        const ref = node.system.spawn(
          (message: unknown, ctx) => {
            const command = message as { to?: Ref; seq: number; from?: string };
            if (command.to !== undefined) ctx.send(command.to, { from: String(ctx.self), seq: command.seq });
            else received.get(String(ctx.self))!.push(command as Delivery);
          },
          { name: `actor-${i}` },
        );
        received.set(String(ref), []);
        actors.push(ref);
      }
    }
    const nodeOf = (ref: Ref) => nodes.find((node) => node.name === ref.node)!;
    // Each node addresses another node's actors by the refs it learnt over the link (as separate
    // processes would): they route through TCP, never straight into the other system's cells.
    const seen = new Map<string, Ref>();
    for (const node of nodes) {
      for (const [index, target] of actors.entries()) {
        const ref = target.node === node.name ? target : await node.whereis(`actor-${index % ACTORS_PER_NODE}`, target.node);
        expect(ref!.equals(target)).toBe(true);
        if (target.node !== node.name) expect(ref).not.toBe(target);
        seen.set(`${node.name} ${index}`, ref!);
      }
    }
    const bytesBefore = nodes.reduce((sum, node) => sum + node.stats().bytesSent, 0);
    const send = fc.record({
      from: fc.nat({ max: actors.length - 1 }),
      to: fc.nat({ max: actors.length - 1 }),
      pause: fc.nat({ max: 9 }),
    });
    let seq = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(send, { minLength: 1, maxLength: 200 }), async (sends) => {
        for (const list of received.values()) list.length = 0;
        const expected = new Map<string, number[]>();
        for (const { from, to, pause } of sends) {
          const sender = actors[from]!;
          const target = actors[to]!;
          const key = `${String(sender)}>${String(target)}`;
          const n = ++seq;
          (expected.get(key) ?? expected.set(key, []).get(key)!).push(n);
          nodeOf(sender).system.send(sender, { to: seen.get(`${sender.node} ${to}`)!, seq: n });
          // Now and then a turn of the event loop, so frames and local sends interleave differently.
          if (pause === 0) await sleep(0);
        }
        await eventually(() => [...received.values()].reduce((sum, list) => sum + list.length, 0) >= sends.length, 10_000, 'every delivery');
        await sleep(5);
        const got = new Map<string, number[]>();
        for (const [target, list] of received) {
          for (const { from, seq: n } of list) {
            const key = `${from}>${target}`;
            (got.get(key) ?? got.set(key, []).get(key)!).push(n);
          }
        }
        expect(got).toEqual(expected);
      }),
      { numRuns: 25, seed: 2026 },
    );
    // The remote sends went over the links.
    expect(nodes.reduce((sum, node) => sum + node.stats().bytesSent, 0) - bytesBefore).toBeGreaterThan(1_000);
    for (const ref of actors) nodeOf(ref).system.exit(ref, 'kill');
  });
});
