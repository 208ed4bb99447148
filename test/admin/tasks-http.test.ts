/**
 * The `/tasks` endpoints of a real node's admin surface over a real task queue (SQLite): reads,
 * the token-gated mutating endpoints, and typed refusals of bad requests.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminErrorCode } from '../../src/admin/index.js';
import { BusErrorCode, type SqlTaskQueue } from '../../src/bus/index.js';
import { TASK_BACKENDS } from '../bus/tasks/stores.js';
import { startTestNode } from './helpers.js';

const sqlite = TASK_BACKENDS.find((backend) => backend.name === 'sqlite')!;
const TOKEN = 'tasks-admin-token-0123456789';

interface Answer {
  readonly status: number;
  readonly body: { error?: { code: string; message: string } } & Record<string, unknown>;
  readonly headers: Headers;
}

async function call(url: string, method: 'GET' | 'POST', body?: unknown, token?: string, raw?: string): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await fetch(url, { method, headers, ...(method === 'POST' ? { body: raw ?? JSON.stringify(body ?? {}) } : {}) });
  return { status: response.status, body: (await response.json()) as Answer['body'], headers: response.headers };
}

/** POST with a body larger than the cap, read whatever the server answers before it closes. */
function postRaw(url: string, body: Buffer, token: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('admin /tasks endpoints', () => {
  let queue: SqlTaskQueue;
  beforeAll(async () => {
    await sqlite.setup();
    queue = await sqlite.open();
    await queue.createQueue('emails');
  }, 30_000);
  afterAll(async () => {
    await queue.close();
    await sqlite.teardown();
  });

  it('without a configured token: reads answer, every mutating endpoint is refused with 403 and changes nothing', async () => {
    const { node } = await startTestNode({ root: { children: [] }, admin: { port: 0, tasks: queue } });
    const base = node.adminUrl!;
    const listed = await call(`${base}/tasks/queues`, 'GET');
    expect(listed.status).toBe(200);
    expect((listed.body.queues as { name: string }[]).map((info) => info.name)).toContain('emails');
    const before = (await queue.queueInfo('emails')).depth;
    for (const path of ['/tasks/queues/emails/enqueue', '/tasks/queues/emails/redrive', `/tasks/0190d7a0-0000-7000-8000-000000000000/retry`, `/tasks/0190d7a0-0000-7000-8000-000000000000/cancel`]) {
      const refused = await call(`${base}${path}`, 'POST', path.endsWith('enqueue') ? { task: { name: 'send' } } : {});
      expect(refused.status, path).toBe(403);
      expect(refused.body.error?.code).toBe(AdminErrorCode.TokenRequired);
    }
    expect((await queue.queueInfo('emails')).depth).toBe(before);
    await node.stop();
  });

  it('with a token: enqueue one and many, status, list, cancel, retry, dead letters and redrive', async () => {
    const { node } = await startTestNode({ root: { children: [] }, admin: { port: 0, token: TOKEN, tasks: queue } });
    const base = node.adminUrl!;
    const unauthorized = await call(`${base}/tasks/queues/emails/enqueue`, 'POST', { task: { name: 'send' } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.body.error?.code).toBe(AdminErrorCode.Unauthorized);
    expect((await call(`${base}/tasks/queues/emails/enqueue`, 'POST', { task: { name: 'send' } }, `${TOKEN}x`)).status).toBe(401);

    const one = await call(`${base}/tasks/queues/emails/enqueue`, 'POST', { task: { name: 'send', payload: { to: 'a@example.com' }, idempotencyKey: 'k1' }, priority: 5 }, TOKEN);
    expect(one.status).toBe(201);
    expect(one.body).toEqual({ id: expect.any(String), duplicate: false });
    const again = await call(`${base}/tasks/queues/emails/enqueue`, 'POST', { task: { name: 'send', idempotencyKey: 'k1' } }, TOKEN);
    expect(again.body).toEqual({ id: one.body.id, duplicate: true });
    const many = await call(`${base}/tasks/queues/emails/enqueue`, 'POST', { tasks: [{ name: 'send' }, { name: 'send', maxRetries: 0 }] }, TOKEN);
    expect(many.status).toBe(201);
    const [second, doomed] = many.body.results as { id: string }[];

    const status = await call(`${base}/tasks/${one.body.id as string}`, 'GET', undefined, TOKEN);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ queue: 'emails', state: 'queued', priority: 5, envelope: { name: 'send', payload: { to: 'a@example.com' } } });
    const listed = await call(`${base}/tasks/queues/emails/tasks?state=queued&limit=10`, 'GET', undefined, TOKEN);
    expect((listed.body.tasks as unknown[]).length).toBe(3);

    const cancelled = await call(`${base}/tasks/${second!.id}/cancel`, 'POST', {}, TOKEN);
    expect(cancelled.body).toEqual({ id: second!.id, state: 'cancelled' });
    const conflict = await call(`${base}/tasks/${second!.id}/cancel`, 'POST', {}, TOKEN);
    expect(conflict.status).toBe(409);
    expect(conflict.body.error?.code).toBe(BusErrorCode.TaskStateConflict);

    // A worker's failure, through the queue's own API: with max_retries 0 it is dead-lettered.
    const leased = await queue.lease('emails', 10);
    const task = leased.find((entry) => entry.envelope.id === doomed!.id)!;
    await queue.settle('emails', [{ id: task.envelope.id, leaseToken: task.leaseToken, outcome: { kind: 'failed', reason: 'error', detail: 'smtp down' } }]);
    const dlq = await call(`${base}/tasks/queues/emails/dlq`, 'GET', undefined, TOKEN);
    expect(dlq.body.deadLetters).toEqual([expect.objectContaining({ reason: 'max-retries', envelope: expect.objectContaining({ id: doomed!.id }) })]);
    const redriven = await call(`${base}/tasks/queues/emails/redrive`, 'POST', { ids: [doomed!.id] }, TOKEN);
    expect(redriven.body).toEqual({ redriven: 1 });
    expect((await queue.get(doomed!.id))?.state).toBe('queued');
    const retried = await call(`${base}/tasks/${doomed!.id}/retry`, 'POST', {}, TOKEN);
    expect(retried.status).toBe(409);
    await node.stop();
  });

  it('bad requests get typed errors: 400, 404, 405, 413', async () => {
    const { node } = await startTestNode({ root: { children: [] }, admin: { port: 0, token: TOKEN, tasks: queue, maxBodyBytes: 1_024 } });
    const base = node.adminUrl!;
    const enqueue = `${base}/tasks/queues/emails/enqueue`;
    const cases: [string, Answer, number, string][] = [
      ['not JSON', await call(enqueue, 'POST', undefined, TOKEN, '{"task":'), 400, AdminErrorCode.BadRequest],
      ['an array body', await call(enqueue, 'POST', [1], TOKEN), 400, AdminErrorCode.BadRequest],
      ['an unknown field', await call(enqueue, 'POST', { task: { name: 'a' }, extra: 1 }, TOKEN), 400, AdminErrorCode.BadRequest],
      ['task and tasks', await call(enqueue, 'POST', { task: { name: 'a' }, tasks: [{ name: 'a' }] }, TOKEN), 400, AdminErrorCode.BadRequest],
      ['no name', await call(enqueue, 'POST', { task: { payload: 1 } }, TOKEN), 400, AdminErrorCode.BadRequest],
      ['a bad name', await call(enqueue, 'POST', { task: { name: 'has space' } }, TOKEN), 400, BusErrorCode.InvalidTaskEnvelope],
      ['an empty batch', await call(enqueue, 'POST', { tasks: [] }, TOKEN), 400, AdminErrorCode.BadRequest],
      ['an unknown queue', await call(`${base}/tasks/queues/nope/enqueue`, 'POST', { task: { name: 'a' } }, TOKEN), 404, BusErrorCode.TaskQueueNotFound],
      ['an unknown task', await call(`${base}/tasks/0190d7a0-0000-7000-8000-000000000000`, 'GET', undefined, TOKEN), 404, BusErrorCode.TaskNotFound],
      ['retry of an unknown task', await call(`${base}/tasks/0190d7a0-0000-7000-8000-000000000000/retry`, 'POST', {}, TOKEN), 404, BusErrorCode.TaskNotFound],
      ['a bad limit', await call(`${base}/tasks/queues/emails/tasks?limit=0`, 'GET', undefined, TOKEN), 400, AdminErrorCode.BadRequest],
      ['a bad state', await call(`${base}/tasks/queues/emails/tasks?state=done`, 'GET', undefined, TOKEN), 400, AdminErrorCode.BadRequest],
      ['GET on enqueue', await call(enqueue, 'GET', undefined, TOKEN), 405, AdminErrorCode.MethodNotAllowed],
      ['an unknown task path', await call(`${base}/tasks/queues/emails/frobnicate`, 'GET', undefined, TOKEN), 404, AdminErrorCode.NotFound],
    ];
    for (const [what, answer, status, code] of cases) {
      expect(answer.status, what).toBe(status);
      expect(answer.body.error?.code, what).toBe(code);
    }
    expect((await call(enqueue, 'GET', undefined, TOKEN)).headers.get('allow')).toBe('POST');
    const large = await postRaw(enqueue, Buffer.from(JSON.stringify({ task: { name: 'a', payload: 'x'.repeat(2_000) } })), TOKEN);
    expect(large.status).toBe(413);
    expect(JSON.parse(large.text).error.code).toBe(AdminErrorCode.BodyTooLarge);
    await node.stop();
  });

  it('an admin given no queue serves no /tasks endpoints', async () => {
    const { node } = await startTestNode({ root: { children: [] }, admin: { port: 0 } });
    const answer = await call(`${node.adminUrl!}/tasks/queues`, 'GET');
    expect(answer.status).toBe(404);
    await node.stop();
  });
});
