/**
 * Auto-connect, as Erlang's default: traffic to a node never connected connects to it and is
 * delivered in order; `autoConnect: false` keeps traffic failing at once; an unreachable node fails
 * the held traffic as noconnection within the bound, with a backoff instead of a connect storm; and
 * hostile refs cannot make a node open unbounded connections (a cap on attempts, a full pending buffer).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Ref } from '../../src/actors/index.js';
import { NodeAutoConnectLimit, NodeDown, NodeLinkFull, type Node } from '../../src/nodes/index.js';
import { eventually, sleep } from '../support/systems.js';
import { peerProcess } from './child.js';
import { monitorAndLink, SECRET, testNode } from './support.js';

/** A TCP server that counts connections and holds them silent (or, with `close`, drops them at once). */
async function counting(close: boolean): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.on('error', () => {});
    if (close) socket.destroy();
    else sockets.add(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.add(server);
  return { server, port: (server.address() as { port: number }).port, connections: () => connections };
}

const servers = new Set<Server>();
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  for (const server of servers) server.close();
  servers.clear();
});

/** A loopback port where nothing listens. */
async function closedPort(): Promise<number> {
  const { server, port } = await counting(true);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `b`'s echo, as `a` learns it in a message from a third node `m`, without ever connecting to `b`. */
async function learnEcho(a: Node, bName: string): Promise<Ref> {
  const m = await testNode('m');
  await m.connect(bName);
  await m.connect(a.name);
  const echo = (await m.whereis('echo', bName)) as Ref;
  let learned: Ref | undefined;
  const inbox = a.system.spawn((message) => void (learned = message as Ref), { name: 'inbox' });
  m.sendNamed('inbox', a.name, echo);
  await eventually(() => learned !== undefined);
  a.system.exit(inbox, 'kill');
  return learned!;
}

describe('auto-connect', () => {
  it('sends and a call to a node never connected connect to it and arrive in order', async () => {
    const a = await testNode('a');
    const b = await peerProcess('b', SECRET);
    const echo = await learnEcho(a, b.name);
    expect(a.isConnected(b.name)).toBe(false);
    const got: unknown[] = [];
    const inbox = a.system.spawn((message) => void got.push(message));
    for (let i = 0; i < 100; i++) a.system.send(echo, { to: inbox, value: i });
    expect(a.stats().autoConnect).toMatchObject({ attempts: 1, pendingNodes: 1, pendingFrames: 100 });
    expect(await a.system.call(echo, ['echo', 'called'])).toBe('called');
    a.sendNamed('echo', b.name, { to: inbox, value: 'named' });
    for (let i = 100; i < 200; i++) a.system.send(echo, { to: inbox, value: i });
    await eventually(() => got.length === 201);
    expect(got).toEqual([...Array.from({ length: 100 }, (_, i) => i), 'named', ...Array.from({ length: 100 }, (_, i) => 100 + i)]);
    expect(a.isConnected(b.name)).toBe(true);
    const stats = a.stats();
    expect(stats.autoConnect).toMatchObject({ attempts: 1, connected: 1, failed: 0, flushed: 101, pendingNodes: 0 });
    expect(stats.unconnectedSends).toBe(0);
    a.system.exit(inbox, 'kill');
  });

  it('autoConnect false: a send is counted and a call fails at once with NodeDown, no connection', async () => {
    const a = await testNode('a', { autoConnect: false });
    const b = await peerProcess('b', SECRET);
    const echo = await learnEcho(a, b.name);
    a.system.send(echo, 'lost');
    await expect(a.system.call(echo, ['echo', 1])).rejects.toBeInstanceOf(NodeDown);
    expect(a.stats().unconnectedSends).toBe(1);
    await sleep(300);
    expect(a.isConnected(b.name)).toBe(false);
    expect(a.stats().autoConnect.attempts).toBe(0);
  });

  it('a node where nothing listens: send counted, call NodeDown within the bound, monitor and link noconnection', async () => {
    const a = await testNode('a', { handshakeTimeoutMs: 1_000 });
    const far = new Ref(`far@127.0.0.1:${await closedPort()}`, 3, 12345);
    const { actor, reasons } = monitorAndLink(a, far);
    a.system.send(far, 'lost');
    a.system.send(actor, 'go');
    const started = Date.now();
    const error = await a.system.call(far, 'hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeDown);
    // The call that waited for the attempt learns why it failed.
    expect((error as Error & { cause?: NodeJS.ErrnoException }).cause?.code).toBe('ECONNREFUSED');
    expect((error as Error).message).toMatch(/is not connected \(noconnection\): .*; connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    // The attempt's bound: the handshake deadline and a second's grace.
    expect(Date.now() - started).toBeLessThan(2_000 + 1_000);
    await eventually(() => reasons.length === 2);
    expect(reasons).toEqual(['noconnection', 'noconnection']);
    expect(a.stats().unconnectedSends).toBe(1);
    expect(a.stats().autoConnect).toMatchObject({ attempts: 1, failed: 1, pendingNodes: 0 });
    a.system.exit(actor, 'kill');
  });

  it('no connect storm: a failing node is backed off, and traffic meanwhile fails at once', async () => {
    const a = await testNode('a', { reconnectMinMs: 100, reconnectMaxMs: 400 });
    const dropper = await counting(true);
    const far = new Ref(`far@127.0.0.1:${dropper.port}`, 3, 1);
    let calls = 0;
    let failed = 0;
    const until = Date.now() + 1_500;
    while (Date.now() < until) {
      a.system.send(far, 'x');
      calls++;
      a.system.call(far, 'x', 5_000).catch((error: unknown) => void (error instanceof NodeDown && failed++));
      await sleep(5);
    }
    await eventually(() => failed === calls);
    // Every 5 ms for 1.5 s, yet a handful of connections: 100, 200, 400, 400… ms apart.
    expect(calls).toBeGreaterThan(100);
    expect(dropper.connections()).toBeGreaterThanOrEqual(2);
    expect(dropper.connections()).toBeLessThanOrEqual(8);
    const stats = a.stats().autoConnect;
    expect(stats.attempts).toBe(dropper.connections());
    expect(stats.backedOff).toBeGreaterThan(100);
    await eventually(() => a.stats().unconnectedSends === calls);
  });

  it('a node with allow auto-connects only to the nodes it lists', async () => {
    const dropper = await counting(true);
    const listed = `listed@127.0.0.1:${dropper.port}`;
    const a = await testNode('a', { allow: [listed] });
    a.system.send(new Ref(`other@127.0.0.1:${dropper.port}`, 3, 1), 'x');
    expect(a.stats().unconnectedSends).toBe(1);
    a.system.send(new Ref(listed, 3, 1), 'x');
    await eventually(() => a.stats().autoConnect.failed === 1);
    expect(a.stats().autoConnect.attempts).toBe(1);
    expect(dropper.connections()).toBe(1);
  });

  it('hostile refs: attempts at once are capped (NodeAutoConnectLimit), a full pending buffer drops sends and refuses calls', async () => {
    const a = await testNode('a', { handshakeTimeoutMs: 1_000, maxPendingAutoConnects: 2, autoConnectPendingCount: 5 });
    const silent = await counting(false);
    const [x1, x2, x3] = ['x1', 'x2', 'x3'].map((name) => new Ref(`${name}@127.0.0.1:${silent.port}`, 3, 1));
    const first = a.system.call(x1!, 'hi').catch((error: unknown) => error);
    const second = a.system.call(x2!, 'hi').catch((error: unknown) => error);
    const third = await a.system.call(x3!, 'hi').catch((error: unknown) => error);
    expect(third).toBeInstanceOf(NodeAutoConnectLimit);
    expect((third as NodeAutoConnectLimit).code).toBe('NODE_AUTO_CONNECT_LIMIT');
    a.system.send(x3!, 'refused');
    // x1 holds its call and takes four sends; the fifth send onwards and a call find it full.
    for (let i = 0; i < 6; i++) a.system.send(x1!, i);
    const full = await a.system.call(x1!, 'more').catch((error: unknown) => error);
    expect(full).toBeInstanceOf(NodeLinkFull);
    expect(a.stats().autoConnect).toMatchObject({ attempts: 2, limited: 2, pendingFull: 3, pendingNodes: 2, pendingFrames: 5 + 1 });
    expect(a.stats().unconnectedSends).toBe(1 + 2);
    await eventually(() => silent.connections() === 2);
    expect(await first).toBeInstanceOf(NodeDown);
    expect(await second).toBeInstanceOf(NodeDown);
    expect(a.stats().unconnectedSends).toBe(1 + 2 + 4);
    expect(a.stats().autoConnect).toMatchObject({ failed: 2, pendingNodes: 0 });
    expect(silent.connections()).toBe(2);
  });
});
