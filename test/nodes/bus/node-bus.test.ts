/**
 * The bus over the node transport, three real nodes on loopback, each homing some topics in its own
 * SQLite file: gapless sequences per topic whichever node publishes, the same reads from every node,
 * a subscription on a non-home node woken by the home's `wake` (not the poll), a typed gap past
 * retention, a home that is down refused by name and its sequences surviving its restart, and
 * nodes whose members differ refused rather than keeping two sequences of one topic.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { homeOf, nodeBus, NODE_BUS_NAME, NodeBusHomeFailed, NodeBusUnavailable, type BusItem, type Node, type NodeBus } from '../../../src/nodes/index.js';
import { testNode } from '../support.js';

const dir = mkdtempSync(join(tmpdir(), 'molo-node-bus-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const buses: NodeBus[] = [];
afterEach(async () => {
  for (const one of buses.splice(0)) await one.close();
});

async function cluster(count: number): Promise<Node[]> {
  const nodes: Node[] = [];
  for (let i = 0; i < count; i++) nodes.push(await testNode(`nb${i}`));
  for (let i = 0; i < count; i++) for (let j = i + 1; j < count; j++) await nodes[i]!.connect(nodes[j]!.name);
  return nodes;
}

async function bus(node: Node, members: readonly string[], options: Parameters<typeof nodeBus>[1] = {}): Promise<NodeBus> {
  const made = await nodeBus(node, { members, file: join(dir, `bus-${files++}.db`), pollIntervalMs: 60_000, retentionIntervalMs: 0, ...options });
  buses.push(made);
  return made;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A topic name homed on `home` among `members`. */
function topicHomedOn(home: string, members: readonly string[], prefix: string): string {
  for (let i = 0; ; i++) if (homeOf(`${prefix}${i}`, members) === home) return `${prefix}${i}`;
}

describe('the node bus', () => {
  it('gapless sequences per topic from every node, the same reads everywhere, subscriptions woken across links in order', async () => {
    const nodes = await cluster(3);
    const members = nodes.map((node) => node.name);
    const all: NodeBus[] = [];
    for (const node of nodes) all.push(await bus(node, members));
    try {
      // One topic homed on each node: every node publishes to every topic.
      const topics = nodes.map((node, i) => topicHomedOn(node.name, members, `t${i}.`));
      const got = new Map<string, BusItem[]>();
      // Subscribed on a node that does not home it; the poll is a minute away, so only a wake-up delivers in time.
      for (const [i, topic] of topics.entries()) {
        const items: BusItem[] = [];
        got.set(topic, items);
        all[(i + 1) % 3]!.subscribe(topic, 1, (item) => items.push(item));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (let round = 0; round < 10; round++) {
        await Promise.all(topics.flatMap((topic) => all.map((one, n) => one.publish(topic, { round, n }))));
      }
      for (const topic of topics) {
        for (const one of all) expect(await one.lastSeq(topic)).toBe(30);
        const reads = await Promise.all(all.map((one) => one.read(topic, 1, 1_000)));
        expect(reads[0]!.messages.map((m) => m.seq)).toEqual([...Array(30).keys()].map((i) => i + 1));
        for (const read of reads) expect(read.messages).toEqual(reads[0]!.messages);
        const items = got.get(topic)!;
        await until(() => items.length === 30, `30 items of ${topic}, got ${items.length}`);
        expect(items.map((item) => (item.kind === 'message' ? item.seq : -1))).toEqual(reads[0]!.messages.map((m) => m.seq));
        expect(items.map((item) => (item.kind === 'message' ? item.payload : undefined))).toEqual(reads[0]!.messages.map((m) => m.payload));
      }
      // A read from further on, and past the head.
      const later = await all[2]!.read(topics[0]!, 29);
      expect(later.messages.map((m) => m.seq)).toEqual([29, 30]);
      expect((await all[1]!.read(topics[0]!, 31)).messages).toEqual([]);
    } finally {
      for (const one of all) await one.close();
    }
  });

  it('past retention a read and a subscription report the gap by its range, from a node that does not home the topic', async () => {
    const nodes = await cluster(2);
    const members = [nodes[0]!.name];
    const [home, other] = [await bus(nodes[0]!, members, { retention: { maxMsgs: 3 } }), await bus(nodes[1]!, members)];
    try {
      for (let i = 1; i <= 10; i++) expect(await other.publish('short', i)).toBe(i);
      expect(await other.enforceRetention()).toBe(7);
      const read = await other.read('short', 1);
      expect(read.gap).toEqual({ topic: 'short', from: 1, to: 7 });
      expect(read.messages.map((m) => m.payload)).toEqual([8, 9, 10]);
      const items: BusItem[] = [];
      other.subscribe('short', 2, (item) => items.push(item));
      await until(() => items.length === 4, 'the gap and three messages');
      expect(items[0]).toEqual({ kind: 'gap', topic: 'short', from: 2, to: 7 });
      expect(home.subscriptions).toBe(0);
    } finally {
      await home.close();
      await other.close();
    }
  });

  it('a home that is down is refused by name; after its restart on the same file the sequence goes on and tails catch up', async () => {
    const [first, other] = await cluster(2);
    const name = first!.name;
    const file = join(dir, 'restart.db');
    let home = await nodeBus(first!, { members: [name], file, pollIntervalMs: 60_000, retentionIntervalMs: 0 });
    const client = await bus(other!, [name]);
    const items: BusItem[] = [];
    client.subscribe('r', 1, (item) => items.push(item));
    for (let i = 1; i <= 3; i++) await client.publish('r', i);
    await until(() => items.length === 3, 'three items');
    await home.close();
    await first!.stop();
    const down = await client.publish('r', 4).catch((error: unknown) => error);
    expect(down).toBeInstanceOf(NodeBusUnavailable);
    expect(down).toMatchObject({ code: 'NODE_BUS_UNAVAILABLE', topic: 'r', home: name });
    await expect(client.read('r', 1)).rejects.toBeInstanceOf(NodeBusUnavailable);
    const again = await testNode(name);
    home = await nodeBus(again, { members: [name], file, pollIntervalMs: 60_000, retentionIntervalMs: 0 });
    try {
      await other!.connect(name);
      expect(await home.publish('r', 4)).toBe(4);
      // Published on the home before the client's hello re-registered it: the link coming up re-reads.
      await until(() => items.length === 4, 'the fourth item after the restart');
      expect(await client.publish('r', 5)).toBe(5);
      await until(() => items.length === 5, 'the fifth item');
      expect(items.map((item) => (item.kind === 'message' ? item.payload : undefined))).toEqual([1, 2, 3, 4, 5]);
    } finally {
      await home.close();
      await client.close();
    }
  });

  it('a wake-up from a node that does not home the topic is counted as a forgery; the home\'s wakes a tail', async () => {
    const [a, b, c] = await cluster(3);
    const members = [a!.name, c!.name];
    const [onA, , onC] = [await bus(a!, members), await bus(b!, members), await bus(c!, members)];
    const topic = topicHomedOn(c!.name, members, 'w');
    expect(await onC.publish(topic, 'first')).toBe(1);
    const items: BusItem[] = [];
    onA.subscribe(topic, 2, (item) => items.push(item));
    await sleep(200);
    // b speaks for c's topic: a drops it.
    b!.sendNamed(NODE_BUS_NAME, a!.name, ['wake', b!.name, topic]);
    await until(() => onA.forgeries().wake === 1, 'the forgery counted');
    // The home's own wake-up after a publish delivers (the poll is a minute away).
    expect(await onC.publish(topic, 'second')).toBe(2);
    await until(() => items.length === 1, 'the second message');
    expect(items[0]).toMatchObject({ kind: 'message', seq: 2, payload: 'second' });
  });

  it('a node whose members differ is refused by the node it takes for a home: never two sequences of one topic', async () => {
    const [a, b, c] = await cluster(3);
    const members = [a!.name, b!.name];
    await bus(a!, members);
    const onB = await bus(b!, members);
    // c believes b homes every topic.
    const onC = await nodeBus(c!, { members: [b!.name], pollIntervalMs: 60_000 });
    buses.push(onC);
    const topic = topicHomedOn(a!.name, members, 'x');
    expect(await onB.publish(topic, 'on a')).toBe(1);
    const refused = await onC.publish(topic, 'on b?').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NodeBusHomeFailed);
    expect(refused).toMatchObject({ code: 'NODE_BUS_HOME_FAILED', remoteCode: 'NODE_BUS_NOT_HOME', home: b!.name, topic });
    await expect(onC.read(topic, 1)).rejects.toMatchObject({ remoteCode: 'NODE_BUS_NOT_HOME' });
    expect(await onB.lastSeq(topic)).toBe(1);
    // A member without a file, or a members list that names no node, is refused before anything opens.
    await expect(nodeBus(c!, { members: [c!.name] })).rejects.toMatchObject({ code: 'NODE_BUS_INVALID_ARGUMENT', argument: 'file' });
    await expect(nodeBus(c!, { members: ['nonsense'] })).rejects.toMatchObject({ argument: 'members' });
    await expect(nodeBus(c!, { member: [] } as never)).rejects.toThrow(/did you mean members\?/);
  });
});
