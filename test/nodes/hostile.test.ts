/**
 * Hostile and broken peers against a real node over TCP: garbage frames (fast-check), frames for
 * actors that do not exist, an oversized frame, a handshake that never finishes, a same-named or
 * duplicate peer, a silent peer and a peer that stops reading. Each is refused or dropped with a
 * typed error and a counter; the node stays up and keeps serving a good peer.
 */
import fc from 'fast-check';
import { pack, unpack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { CallRequest, Ref } from '../../src/actors/index.js';
import { FrameKind } from '../../src/actors/placement/frames.js';
import { HandshakeRefused, NodeLinkFull, type Node } from '../../src/nodes/index.js';
import { eventually, sleep } from '../support/systems.js';
import { rawPeer, rawSocket } from './raw-peer.js';
import { testNode } from './support.js';

/** The node answers a good peer's call: it is up and serving. */
async function serving(node: Node, good: Node): Promise<void> {
  if (node.system.whereis('echo') === undefined) {
    node.system.spawn((message) => void (message instanceof CallRequest && message.reply(message.request)), { name: 'echo' });
  }
  await good.connect(node.name);
  expect(await good.callNamed('echo', node.name, 'ping')).toBe('ping');
}

describe('hostile peers', () => {
  it('fuzzed frames are dropped and counted, the link and the node stay up', async () => {
    const a = await testNode('a');
    const good = await testNode('good');
    const peer = await rawPeer(a, 'fuzzer@127.0.0.1:1');
    await eventually(() => a.isConnected(peer.name));
    const before = process.memoryUsage().heapUsed;
    let sent = 0;
    const body = fc.oneof(
      fc.uint8Array({ minLength: 5, maxLength: 400 }),
      fc.anything({ maxDepth: 3 }).map((value) => new Uint8Array(Buffer.concat([Buffer.alloc(4), pack([value])]))),
      fc.tuple(fc.integer({ min: 0, max: 40 }), fc.anything({ maxDepth: 2 })).map(([kind, value]) => new Uint8Array(Buffer.concat([Buffer.alloc(4), pack([kind, value, value])]))),
    );
    fc.assert(
      fc.property(fc.array(body, { minLength: 1, maxLength: 30 }), (records) => {
        for (const record of records) {
          peer.record(record);
          sent++;
        }
      }),
      { numRuns: 100, seed: 1414 },
    );
    // Each is malformed, misaddressed, or a send by name to a name not registered here.
    await eventually(() => a.stats().framesDropped + a.stats().unknownActors === sent, 10_000, `${sent} frames dropped`);
    expect(a.isConnected(peer.name)).toBe(true);
    await serving(a, good);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1_048_576);
    peer.socket.destroy();
  });

  it('a message for an actor not alive here is dropped with a count', async () => {
    const a = await testNode('a');
    const peer = await rawPeer(a, 'p@127.0.0.1:1');
    peer.frame([FrameKind.Send, new Ref(a.name, 999_999, a.system.creation), 'lost']);
    peer.frame([FrameKind.SendName, 'nobody', 'lost']);
    await eventually(() => a.stats().unknownActors === 2);
    expect(a.isConnected(peer.name)).toBe(true);
    peer.socket.destroy();
  });

  it('a frame over the cap closes the link (NodeFrameTooLarge counted); the node stays up', async () => {
    const a = await testNode('a', { maxFrameBytes: 4_096 });
    const good = await testNode('good');
    const peer = await rawPeer(a, 'big@127.0.0.1:1');
    const downs: string[] = [];
    a.on('nodedown', (node, reason) => downs.push(`${node} ${reason}`));
    const head = Buffer.alloc(8);
    head.writeUInt32BE(4 + 4_096 + 1, 0);
    peer.socket.write(head);
    await peer.closed;
    expect(downs).toEqual([`${peer.name} frame_too_large`]);
    expect(a.stats().framesTooLarge).toBe(1);
    await serving(a, good);
  });

  it('a truncated frame then a hang-up: the link goes down, nothing else', async () => {
    const a = await testNode('a');
    const peer = await rawPeer(a, 't@127.0.0.1:1');
    const head = Buffer.alloc(10);
    head.writeUInt32BE(500, 0);
    peer.socket.end(head);
    await eventually(() => !a.isConnected(peer.name));
    expect(a.stats().linksDown).toBe(1);
  });

  it('a handshake that never finishes is closed at the deadline and counted', async () => {
    const a = await testNode('a', { handshakeTimeoutMs: 300 });
    const silent = await rawSocket(a);
    const half = await rawSocket(a);
    half.write(Buffer.from([0, 0, 0, 40, 0x94]));
    const started = Date.now();
    await Promise.all([silent, half].map((socket) => new Promise((resolve) => socket.once('close', resolve))));
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(2_000);
    await eventually(() => a.stats().handshakesRefused.timeout === 2);
  });

  it('a peer with this node\'s name, a second link from a linked node and a bad name are refused', async () => {
    const a = await testNode('a');
    const good = await testNode('good');
    await expect(rawPeer(a, a.name)).rejects.toMatchObject({ reason: 'same_name' });
    const first = await rawPeer(a, 'twin@127.0.0.1:1');
    await expect(rawPeer(a, 'twin@127.0.0.1:1')).rejects.toBeInstanceOf(HandshakeRefused);
    await expect(rawPeer(a, 'no name at all')).rejects.toMatchObject({ reason: 'bad_name' });
    await expect(rawPeer(a, 'x@127.0.0.1:1', { secret: 'a-wrong-secret-of-some-length' })).rejects.toMatchObject({ reason: 'auth' });
    expect(a.stats().handshakesRefused).toMatchObject({ same_name: 1, duplicate: 1, bad_name: 1 });
    expect(a.isConnected(first.name)).toBe(true);
    await serving(a, good);
    first.socket.destroy();
  });

  it('a peer that goes silent is down after the detection time', async () => {
    const a = await testNode('a', { detectionMs: 300 });
    const peer = await rawPeer(a, 'mute@127.0.0.1:1');
    const downs: string[] = [];
    a.on('nodedown', (node, reason) => downs.push(`${node} ${reason}`));
    const started = Date.now();
    await peer.closed;
    expect(downs).toEqual([`${peer.name} heartbeat`]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('a peer that stops reading: sends are dropped at the queue cap (drop-newest), a call fails at once, memory stays bounded', async () => {
    const queue = 256 * 1_024;
    const a = await testNode('a', { sendQueueBytes: queue, maxFrameBytes: 16 * 1_024 });
    const peer = await rawPeer(a, 'stuck@127.0.0.1:1', { sendQueueBytes: queue });
    peer.socket.pause();
    const downs: string[] = [];
    a.on('nodedown', (node, reason) => downs.push(`${node} ${reason}`));
    const target = new Ref(peer.name, 5, peer.result.info.creation);
    const payload = 'x'.repeat(1_000);
    for (let i = 0; i < 2_000; i++) a.system.send(target, payload);
    const link = a.links()[0]!;
    expect(link.queuedBytes).toBeLessThanOrEqual(queue);
    expect(a.stats().queueFull).toBeGreaterThan(1_500);
    expect(downs).toEqual([]);
    const started = Date.now();
    // As large as the sends that no longer fit: the queue is full by bytes.
    // At once means long before the call's own timeout; the bound leaves room for a loaded machine's pauses.
    const failure = await a.system.call(target, payload, 60_000).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NodeLinkFull);
    expect((failure as NodeLinkFull).code).toBe('NODE_LINK_FULL');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(a.isConnected(peer.name)).toBe(true);
    peer.socket.destroy();
  });

  it('with fullPolicy disconnect, a full queue closes the link', async () => {
    const queue = 128 * 1_024;
    const a = await testNode('a', { sendQueueBytes: queue, maxFrameBytes: 16 * 1_024, fullPolicy: 'disconnect' });
    const peer = await rawPeer(a, 'stuck@127.0.0.1:1', { sendQueueBytes: queue });
    peer.socket.pause();
    const downs: string[] = [];
    a.on('nodedown', (node, reason) => downs.push(`${node} ${reason}`));
    const target = new Ref(peer.name, 5, peer.result.info.creation);
    for (let i = 0; i < 500; i++) a.system.send(target, 'y'.repeat(1_000));
    await eventually(() => downs.length === 1);
    expect(downs).toEqual([`${peer.name} queue_full`]);
    await sleep(10);
    peer.socket.destroy();
  });

  it('at maxPendingHandshakes a newcomer evicts the oldest socket without a hello, which is told busy; a node not in allow is refused (unknown)', async () => {
    const a = await testNode('a', { maxPendingHandshakes: 2, handshakeTimeoutMs: 2_000, allow: ['friend@127.0.0.1:1'] });
    const held = [await rawSocket(a), await rawSocket(a)];
    const told: Buffer[] = [];
    held[0]!.on('data', (chunk: Buffer) => told.push(chunk));
    await sleep(50);
    await rawSocket(a);
    await new Promise((resolve) => held[0]!.once('close', resolve));
    expect(a.stats().handshakesRefused.evicted).toBe(1);
    const frame = Buffer.concat(told);
    expect(unpack(frame.subarray(4, 4 + frame.readUInt32BE(0)))).toEqual(['refused', 'busy']);
    expect(held[1]!.destroyed).toBe(false);
    for (const socket of held) socket.destroy();
    await expect(rawPeer(a, 'stranger@127.0.0.1:1')).rejects.toMatchObject({ reason: 'unknown' });
    const friend = await rawPeer(a, 'friend@127.0.0.1:1');
    expect(a.isConnected(friend.name)).toBe(true);
  });
});
