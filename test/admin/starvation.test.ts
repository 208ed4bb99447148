/**
 * The admin surface cannot be starved (issue 10 §4), real sockets against a real node. Before: 64
 * idle TCP connections made every further connection fail with ECONNRESET, `/health` included,
 * for as long as they stayed (Node checks `headersTimeout` every 30 s only).
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_ADMIN_CONNECTIONS } from '../../src/admin/index.js';
import { startTestNode } from './helpers.js';
import { httpGet } from './http-client.js';

const opened: Socket[] = [];
afterEach(() => {
  for (const socket of opened.splice(0)) socket.destroy();
});

/** `count` TCP connections that connect and then send `payload` (nothing, by default) and no more. */
async function holdSockets(url: string, count: number, payload = ''): Promise<Socket[]> {
  const { hostname, port } = new URL(url);
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i++) {
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    opened.push(socket);
    sockets.push(socket);
    await new Promise((resolve) => socket.once('connect', resolve));
    if (payload !== '') socket.write(payload);
  }
  return sockets;
}

const closedCount = (sockets: readonly Socket[]): number => sockets.filter((socket) => socket.destroyed || socket.readyState === 'closed').length;

const rootSpec = { strategy: 'one_for_one' as const, children: [] };

describe('admin surface under idle and slow connections', () => {
  it(`answers /health, /livez and /readyz while ${MAX_ADMIN_CONNECTIONS} idle sockets are open`, async () => {
    const { node } = await startTestNode({ root: rootSpec });
    await holdSockets(node.adminUrl!, MAX_ADMIN_CONNECTIONS);
    for (const path of ['/health', '/livez', '/readyz']) {
      const answer = await httpGet(`${node.adminUrl}${path}`);
      expect(answer.status, path).toBe(200);
    }
    await node.stop();
  });

  it('answers while 64 slowloris sockets each sent half a request head', async () => {
    const { node } = await startTestNode({ root: rootSpec });
    await holdSockets(node.adminUrl!, MAX_ADMIN_CONNECTIONS, 'GET /tree HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    expect((await httpGet(`${node.adminUrl}/health`)).status).toBe(200);
    expect((await httpGet(`${node.adminUrl}/tree`)).status).toBe(200);
    await node.stop();
  });

  it('closes a connection that sends no whole request head within headerTimeoutMs, by its own timer', async () => {
    const { node } = await startTestNode({ root: rootSpec, admin: { port: 0, headerTimeoutMs: 300 } });
    const [silent, slow] = [...(await holdSockets(node.adminUrl!, 1)), ...(await holdSockets(node.adminUrl!, 1, 'GET /health HTTP/1.1\r\n'))];
    const started = Date.now();
    await Promise.all([silent, slow].map((socket) => new Promise((resolve) => socket!.once('close', resolve))));
    // Before: open for 30 s or more. Generous bound: far below Node's 30 s check interval.
    expect(Date.now() - started).toBeLessThan(5_000);
    await node.stop();
  });

  it('keeps at most maxConnections sockets: each newcomer evicts the oldest idle one', async () => {
    const { node } = await startTestNode({ root: rootSpec, admin: { port: 0, maxConnections: 8 } });
    const sockets = await holdSockets(node.adminUrl!, 20);
    const answer = await httpGet(`${node.adminUrl}/health`);
    expect(answer.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // 21 connections in all, 8 slots: the 13 oldest idle ones were evicted, newest kept.
    expect(closedCount(sockets)).toBeGreaterThanOrEqual(13);
    expect(closedCount(sockets.slice(0, 12))).toBe(12);
    await node.stop();
  });

  it('probes do not share the request cap: with every non-probe slot held by a hanging /metrics, /health and /readyz answer', async () => {
    let release!: () => void;
    const hanging = new Promise<string>((resolve) => (release = () => resolve('# nothing\n')));
    const { node } = await startTestNode({ root: rootSpec, metrics: () => hanging, admin: { port: 0, maxRequests: 4 } });
    const held = Array.from({ length: 4 }, () => httpGet(`${node.adminUrl}/metrics`));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const overloaded = await httpGet(`${node.adminUrl}/metrics`);
    expect(overloaded.status).toBe(503);
    expect(JSON.parse(overloaded.body).error.code).toBe('ADMIN_OVERLOADED');
    expect((await httpGet(`${node.adminUrl}/health`)).status).toBe(200);
    expect((await httpGet(`${node.adminUrl}/readyz`)).status).toBe(200);
    // 64 sockets with a request each in flight would still leave no room; idle ones never block.
    await holdSockets(node.adminUrl!, MAX_ADMIN_CONNECTIONS);
    expect((await httpGet(`${node.adminUrl}/livez`)).status).toBe(200);
    release();
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    await node.stop();
  });
});
