/**
 * Slow request bodies cannot take the admin surface's request slots (issue 22): 20 POSTs that hold
 * a valid token and send their body a byte at a time (here: not at all past the first bytes) used
 * to take all 16 `maxRequests` slots until Node's own request timeout (25 s and more), so /tree got
 * 503. Now writes may hold only `maxWriteRequests` slots (default half), reads keep the rest, and a
 * body not read within `bodyTimeoutMs` is answered 408, its connection closed, and counted.
 * Real sockets against a real node and a real SQLite task queue.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdminErrorCode, AdminInvalidOption, startAdminHttp, type AdminHttpServer } from '../../src/admin/index.js';
import type { SqlTaskQueue } from '../../src/bus/index.js';
import { TASK_BACKENDS } from '../bus/tasks/stores.js';
import { startTestNode } from './helpers.js';

const sqlite = TASK_BACKENDS.find((backend) => backend.name === 'sqlite')!;
const TOKEN = 'slow-bodies-admin-token-0123456789';
const SLOW_POSTS = 20;
const BODY_TIMEOUT_MS = 1_500;

const opened: Socket[] = [];
afterEach(() => {
  for (const socket of opened.splice(0)) socket.destroy();
});

interface SlowPost {
  readonly socket: Socket;
  /** The status line's code once an answer came (0: none), and when the socket closed. */
  status: number;
  closedAt: number | undefined;
  readonly closed: Promise<void>;
}

/** A POST with a valid token that declares 1,000 body bytes, sends 9, and then nothing. */
async function slowPost(url: string): Promise<SlowPost> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => undefined);
  opened.push(socket);
  await new Promise((resolve) => socket.once('connect', resolve));
  let text = '';
  const post: SlowPost = {
    socket,
    status: 0,
    closedAt: undefined,
    closed: new Promise((resolve) => socket.once('close', () => resolve())),
  };
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
    if (match !== null) post.status = Number(match[1]);
  });
  void post.closed.then(() => (post.closedAt = Date.now()));
  socket.write(
    `POST /tasks/queues/emails/enqueue HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"task": `,
  );
  return post;
}

async function timedGet(url: string): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  return { status: response.status, ms: Date.now() - started };
}

describe('admin surface under slow request bodies', () => {
  let queue: SqlTaskQueue;
  let server: AdminHttpServer | undefined;
  beforeAll(async () => {
    await sqlite.setup();
    queue = await sqlite.open();
    await queue.createQueue('emails');
  }, 30_000);
  afterAll(async () => {
    await queue.close();
    await sqlite.teardown();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it(`${SLOW_POSTS} slow POST bodies with the token: /health and /tree still answer 200, the posts are cut at bodyTimeoutMs and counted`, async () => {
    const { node } = await startTestNode({ root: { children: [] }, admin: false });
    server = await startAdminHttp({ runtime: node.system, admin: node.admin, port: 0, token: TOKEN, tasks: queue, bodyTimeoutMs: BODY_TIMEOUT_MS });
    const started = Date.now();
    const posts: SlowPost[] = [];
    for (let i = 0; i < SLOW_POSTS; i++) posts.push(await slowPost(server.url));
    // Let the server take every request head in before the reads come.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const reads = await Promise.all(['/health', '/tree', '/processes'].map(async (path) => [path, (await timedGet(`${server!.url}${path}`)).status] as const));
    expect(Object.fromEntries(reads)).toEqual({ '/health': 200, '/tree': 200, '/processes': 200 });
    // Every slow post ends within a bounded time: refused at once (503, no write slot) or cut at the body deadline (408).
    await Promise.race([Promise.all(posts.map((post) => post.closed)), new Promise((resolve) => setTimeout(resolve, 12_000))]);
    const open = posts.filter((post) => post.closedAt === undefined).length;
    expect(open).toBe(0);
    const statuses = posts.map((post) => post.status).sort();
    const timedOut = statuses.filter((status) => status === 408).length;
    expect(timedOut).toBe(8); // maxWriteRequests: half of maxRequests (16)
    expect(statuses.filter((status) => status === 503)).toHaveLength(SLOW_POSTS - 8);
    const cutAfter = Math.max(...posts.filter((post) => post.status === 408).map((post) => post.closedAt! - started));
    expect(cutAfter).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 100);
    expect(server.stats).toMatchObject({ bodyTimeouts: 8, writesRefused: SLOW_POSTS - 8 });
    // The surface is whole afterwards: a write answers.
    const enqueued = await fetch(`${server.url}/tasks/queues/emails/enqueue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ task: { name: 'send', payload: { to: 'a@example.com' } } }),
    });
    expect(enqueued.status).toBe(201);
  }, 25_000);

  it('bodyTimeoutMs and maxWriteRequests have ranges; the 408 carries its code', async () => {
    const { node } = await startTestNode({ root: { children: [] }, admin: false });
    const base = { runtime: node.system, admin: node.admin, port: 0, token: TOKEN, tasks: queue };
    await expect(startAdminHttp({ ...base, bodyTimeoutMs: 10 })).rejects.toBeInstanceOf(AdminInvalidOption);
    await expect(startAdminHttp({ ...base, bodyTimeoutMs: 600_000 })).rejects.toBeInstanceOf(AdminInvalidOption);
    await expect(startAdminHttp({ ...base, maxRequests: 4, maxWriteRequests: 4 })).rejects.toBeInstanceOf(AdminInvalidOption);
    server = await startAdminHttp({ ...base, bodyTimeoutMs: 200 });
    const post = await slowPost(server.url);
    let text = '';
    post.socket.on('data', (chunk: string) => (text += chunk));
    await post.closed;
    expect(post.status).toBe(408);
    expect(text).toContain(AdminErrorCode.BodyTimeout);
  });
});
