/**
 * Nodes in one process over real TCP: names and options are checked, refs of nodes not connected
 * behave as in Erlang (noconnection), a wanted node is reconnected after it comes back, and the
 * kernel's routes by (node, creation) let placed actors and remote nodes coexist.
 */
import { createServer, type AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { behaviourModule, CallRequest, DownMessage, Ref } from '../../src/actors/index.js';
import { HandshakeRefused, InvalidNodeName, InvalidNodeOption, NodeDown, parseNodeName, startNode } from '../../src/nodes/index.js';
import { eventually, sleep } from '../support/systems.js';
import { monitorAndLink, SECRET, testNode } from './support.js';

describe('node names and options', () => {
  it('accepts name@host:port and refuses anything else, typed', () => {
    expect(parseNodeName('a@127.0.0.1:4370')).toEqual({ node: 'a@127.0.0.1:4370', name: 'a', host: '127.0.0.1', port: 4370 });
    expect(parseNodeName('web-1@[::1]:9').host).toBe('::1');
    for (const bad of ['a', 'a@host', '@h:1', 'a@h:0', 'a@h:70000', 'a b@h:1', 'a@h:1x', 'a@[nothost]:1', 42, 'a'.repeat(65) + '@h:1']) {
      expect(() => parseNodeName(bad), String(bad)).toThrow(InvalidNodeName);
    }
  });

  it('refuses a short secret and options outside their caps', async () => {
    await expect(startNode({ name: 'a@127.0.0.1:0', secret: 'short' })).rejects.toThrow(InvalidNodeOption);
    await expect(startNode({ name: 'a@127.0.0.1:0', secret: SECRET, detectionMs: 10 })).rejects.toMatchObject({ option: 'detectionMs' });
    await expect(startNode({ name: 'a@127.0.0.1:0', secret: SECRET, sendQueueBytes: 1_000 })).rejects.toMatchObject({ option: 'sendQueueBytes' });
    await expect(startNode({ name: 'a@127.0.0.1:0', secret: SECRET, fullPolicy: 'block' as never })).rejects.toMatchObject({ option: 'fullPolicy' });
  });

  it('bounds the hello deadline and the per-address cap, and refuses unknown keys naming the nearest one', async () => {
    const base = { name: 'a@127.0.0.1:0', secret: SECRET };
    await expect(startNode({ ...base, helloDeadlineMs: 10 })).rejects.toMatchObject({ option: 'helloDeadlineMs' });
    await expect(startNode({ ...base, handshakeTimeoutMs: 1_000, helloDeadlineMs: 1_001 })).rejects.toMatchObject({ option: 'helloDeadlineMs' });
    await expect(startNode({ ...base, maxPendingHandshakesPerAddress: 0 })).rejects.toMatchObject({ option: 'maxPendingHandshakesPerAddress' });
    await expect(startNode({ ...base, maxPendingHandshakes: 4, maxPendingHandshakesPerAddress: 5 })).rejects.toMatchObject({ option: 'maxPendingHandshakesPerAddress' });
    const typo = await startNode({ ...base, helloDeadlinMs: 500 } as never).catch((error: unknown) => error);
    expect(typo).toBeInstanceOf(InvalidNodeOption);
    expect(typo).toMatchObject({ code: 'NODE_INVALID_OPTION', option: 'helloDeadlinMs' });
    expect((typo as Error).message).toContain('did you mean helloDeadlineMs?');
    await expect(startNode({ ...base, wholly: 1 } as never)).rejects.toThrow(/unknown option$/);
  });
});

describe('refs of nodes not connected', () => {
  it('a call fails at once with NodeDown, a monitor and a link see noconnection, a send is counted', async () => {
    const a = await testNode('a');
    const far = new Ref('far@127.0.0.1:1', 3, 12345);
    await expect(a.system.call(far, 'hi')).rejects.toBeInstanceOf(NodeDown);
    const { actor, reasons } = monitorAndLink(a, far);
    a.system.send(actor, 'go');
    a.system.send(far, 'lost');
    await eventually(() => reasons.length === 2);
    expect(reasons).toEqual(['noconnection', 'noconnection']);
    expect(a.stats().unconnectedSends).toBe(1);
    expect(a.system.isAlive(far)).toBe(false);
    a.system.exit(actor, 'kill');
  });
});

describe('connect to a node that is not there', () => {
  it('rejects with NodeDown carrying the socket error (ECONNREFUSED), in its cause and its message', async () => {
    const a = await testNode('a');
    const closed = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const error = await a.connect(`gone@127.0.0.1:${closed}`).catch((thrown: unknown) => thrown);
    a.disconnect(`gone@127.0.0.1:${closed}`);
    expect(error).toBeInstanceOf(NodeDown);
    expect((error as Error & { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
    expect((error as Error).message).toMatch(/^node gone@127\.0\.0\.1:\d+ is not connected \(noconnection\); connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  });

  it('rejects at once with NodeDown carrying the resolver error (ENOTFOUND) for a host that does not resolve', async () => {
    const a = await testNode('a');
    // `.invalid` never resolves (RFC 2606), so this holds offline and on any resolver.
    const node = 'gone@nonexistent.invalid:4370';
    const error = await a.connect(node).catch((thrown: unknown) => thrown);
    a.disconnect(node);
    expect(error).toBeInstanceOf(NodeDown);
    expect((error as Error & { cause?: { code?: string } }).cause?.code).toMatch(/^(ENOTFOUND|EAI_AGAIN)$/);
    expect((error as Error).message).toMatch(/^node gone@nonexistent\.invalid:4370 is not connected \(noconnection\); getaddrinfo (ENOTFOUND|EAI_AGAIN) nonexistent\.invalid$/);
  });

  it('a peer that does not hold the secret: HandshakeRefused whose reason and message say auth', async () => {
    const a = await testNode('a');
    const x = await testNode('x', { secret: 'another-secret-of-enough-length' });
    const error = await x.connect(a.name).catch((thrown: unknown) => thrown);
    x.disconnect(a.name);
    expect(error).toBeInstanceOf(HandshakeRefused);
    expect(error).toMatchObject({ code: 'NODE_HANDSHAKE_REFUSED', reason: 'auth', peer: a.name });
    expect((error as Error).message).toBe(`handshake with ${a.name} refused (auth): the peer does not hold the cluster secret`);
  });
});

describe('stopping a node', () => {
  it('its actors exit with shutdown as its peers see them (before the link closes), then nodedown', async () => {
    const a = await testNode('a');
    const b = await testNode('b');
    a.system.spawn(() => {}, { name: 'worker' });
    await b.connect(a.name);
    const worker = (await b.whereis('worker', a.name))!;
    const seen: string[] = [];
    b.on('nodedown', (node, reason) => seen.push(`nodedown ${reason}`));
    const watcher = b.system.spawn((message, ctx) => {
      if (message === 'watch') ctx.monitor(worker);
      else if (message instanceof DownMessage) seen.push(`DOWN ${String(message.reason)}`);
    });
    b.system.send(watcher, 'watch');
    await eventually(() => b.system.info(watcher)?.monitors.length === 1, 2_000, 'the monitor');
    // A round trip behind the monitor frame: a has it.
    await b.whereis('worker', a.name);
    await a.stop();
    await eventually(() => seen.length === 2);
    expect(seen).toEqual(['DOWN shutdown', 'nodedown closed']);
    b.system.exit(watcher, 'kill');
  });
});

describe('reconnecting', () => {
  it('a wanted node that comes back on its address is reconnected, with capped backoff', async () => {
    const a = await testNode('a', { reconnectMinMs: 20, reconnectMaxMs: 100 });
    const b = await testNode('b');
    await a.connect(b.name);
    const events: string[] = [];
    a.on('nodeup', (node) => events.push(`up ${node}`));
    a.on('nodedown', (node, reason) => events.push(`down ${node} ${reason}`));
    await b.stop();
    await eventually(() => events.length === 1);
    // Several refused attempts meanwhile; the backoff is capped at 100 ms.
    await sleep(400);
    const again = await testNode(b.name);
    const started = Date.now();
    await eventually(() => a.isConnected(b.name), 3_000, 'reconnected');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(events).toEqual([`down ${b.name} closed`, `up ${b.name}`]);
    again.system.spawn((message) => void (message instanceof CallRequest && message.reply('back')), { name: 'echo' });
    expect(await a.callNamed('echo', b.name, 'x')).toBe('back');
  });

  it('simultaneous connects from both sides end with one link', async () => {
    const a = await testNode('a');
    const b = await testNode('b');
    // Whichever dial loses, both calls resolve: the link that wins serves both.
    await Promise.all([a.connect(b.name), b.connect(a.name)]);
    await eventually(() => a.isConnected(b.name) && b.isConnected(a.name), 3_000, 'one link');
    await sleep(100);
    expect(a.stats().linksUp).toBe(1);
    expect(b.stats().linksUp).toBe(1);
    expect(a.stats().handshakesCompleted + b.stats().handshakesCompleted).toBe(2);
  });
});

describe('placement and nodes side by side', () => {
  it('a remote node calls an actor placed in a worker thread here, by name', async () => {
    const a = await testNode('a');
    const b = await testNode('b');
    const placed = await b.system.spawnPlaced(behaviourModule(new URL('../actors/placement/fixtures/counter.ts', import.meta.url), 'counter', 10), {
      placement: 'thread',
      name: 'counter',
    });
    await a.connect(b.name);
    const ref = (await a.whereis('counter', b.name)) as Ref;
    expect(ref.equals(placed)).toBe(true);
    expect(ref.creation).not.toBe(b.system.creation);
    expect(await a.system.call(ref, { add: 5 })).toBe(15);
    expect(await a.system.call(ref, 'get')).toBe(15);
    b.system.exit(placed, 'shutdown');
    await b.system.exited(placed);
  });
});

describe('placed actors reach other nodes', () => {
  it('an actor in a thread host sends to, calls and monitors an actor of another node through its system', async () => {
    const a = await testNode('a');
    const b = await testNode('b');
    const got: unknown[] = [];
    b.system.spawn((message) => void (message instanceof CallRequest ? message.reply(['b', message.request]) : got.push(message)), { name: 'echo' });
    const worker = b.system.spawn(() => {}, { name: 'worker' });
    await a.connect(b.name);
    const echo = (await a.whereis('echo', b.name))!;
    const remoteWorker = (await a.whereis('worker', b.name))!;
    const probe = await a.system.spawnPlaced(behaviourModule(new URL('../actors/placement/fixtures/probe.ts', import.meta.url), 'probe'), { placement: 'thread' });
    expect(await a.system.call(probe, { call: echo, request: 1 })).toEqual({ reply: ['b', 1] });
    expect(await a.system.call(probe, { send: echo, message: 'from a thread' })).toBe('sent');
    await eventually(() => got.length === 1);
    expect(got).toEqual(['from a thread']);
    await a.system.call(probe, { monitor: remoteWorker });
    // A round trip behind the monitor: b has it.
    await a.system.call(probe, { call: echo, request: 2 });
    b.system.exit(worker, 'shutdown');
    const downs: unknown[] = [];
    for (let i = 0; i < 200 && downs.length === 0; i++) {
      const log = (await a.system.call(probe, 'log')) as { type?: string; reason?: unknown }[];
      downs.push(...log.filter((entry) => entry.type === 'DOWN').map((entry) => entry.reason));
      await sleep(10);
    }
    expect(downs).toEqual(['shutdown']);
    a.system.exit(probe, 'shutdown');
    await a.system.exited(probe);
  });
});

describe('metrics', () => {
  it('molo_node_* read links, queues and refusals at scrape time', async () => {
    const registry = new Registry();
    const a = await testNode('a', { registry });
    const b = await testNode('b');
    await a.connect(b.name);
    expect(await a.whereis('nobody', b.name)).toBeUndefined();
    await expect(startNode({ name: 'x@127.0.0.1:0', secret: 'another-secret-of-enough-length', system: { logger: false } }).then(async (x) => {
      try {
        await x.connect(a.name);
      } finally {
        await x.stop();
      }
    })).rejects.toMatchObject({ reason: 'auth' });
    // x refused first (a proves itself first); a counts when x's refusal reaches it.
    await eventually(() => a.stats().handshakesRefused.auth === 1);
    const text = await registry.metrics();
    expect(text).toContain(`molo_node_links_up{node="${a.name}"} 1`);
    // The whereis call is sent and not yet acknowledged (credits come back per quarter of the queue).
    expect(text).toContain(`molo_node_queued_bytes{node="${a.name}",peer="${b.name}"} ${a.links()[0]!.queuedBytes}`);
    expect(text).toContain(`molo_node_handshakes_refused_total{node="${a.name}",reason="auth"} 1`);
    const sent = /molo_node_bytes_sent_total\{node="[^"]+"\} (\d+)/.exec(text);
    expect(Number(sent?.[1])).toBeGreaterThan(0);
  });
});
