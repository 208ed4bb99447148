/**
 * The caps a client meets by name, on one instance on the Postgres bus: an oversized frame closes
 * with 1009 and a reason naming `rooms.maxMessageBytes`; the instance's topic cap refuses a join
 * that would tail one topic too many (`rooms.maxTopics`), and frees as rooms empty; an SSE client
 * joins and leaves rooms after connect by POST, authenticated as its session and by its socket's
 * token, and a stranger (another session, a wrong token, a huge body) is refused by status.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { sleep } from '../../support/systems.js';
import { Client, instance, type Instance } from './support.js';

let fresh: FreshDatabase;
beforeAll(() => {
  fresh = freshDatabase('rooms_caps');
});
afterAll(() => fresh.drop());

async function withInstance(options: Parameters<typeof instance>[2], body: (one: Instance, clients: Client[]) => Promise<void>): Promise<void> {
  const one = await instance(fresh, `c${Math.random().toString(36).slice(2, 8)}`, options);
  const clients: Client[] = [];
  try {
    await body(one, clients);
  } finally {
    for (const client of clients) await client.close();
    await one.stop();
  }
}

async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

interface SseFrame {
  readonly t: string;
  readonly room?: string;
  readonly data?: unknown;
  readonly socket?: string;
  readonly token?: string;
  readonly code?: string;
  readonly cap?: string;
}

async function sse(port: number, headers: Record<string, string>): Promise<{ events: { id: string; data: SseFrame }[]; close(): void }> {
  const events: { id: string; data: SseFrame }[] = [];
  const req = request({ port, host: '127.0.0.1', path: '/rooms/events', headers });
  let buffer = '';
  await new Promise<void>((resolve, reject) => {
    req.on('response', (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let at;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const id = /^id: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (id !== undefined && data !== undefined) events.push({ id, data: JSON.parse(data) as SseFrame });
        }
      });
      resolve();
    });
    req.on('error', reject);
    req.end();
  });
  return { events, close: () => req.destroy() };
}

async function post(port: number, body: string, headers: Record<string, string>): Promise<{ status: number; cap: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/rooms/events/frame', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, cap: res.headers['x-molo-cap'] as string | undefined }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// Two sessions: the bearer token is the user.
const authenticate = (req: import('node:http').IncomingMessage): unknown => {
  const bearer = /^Bearer (\w+)$/.exec(req.headers.authorization ?? '')?.[1];
  return bearer === undefined ? undefined : { user: bearer };
};

describe('rooms caps', () => {
  it('an oversized frame closes the socket with 1009 and a reason naming the cap', async () => {
    await withInstance({ maxMessageBytes: 1_024 }, async (one, clients) => {
      const bad = await Client.connect(one.rooms.port);
      clients.push(bad);
      bad.send({ t: 'publish', room: 'lobby', data: 'x'.repeat(2_000) });
      await bad.closedOnce();
      expect(bad.closed).toEqual({ code: 1009, reason: 'rooms.maxMessageBytes' });
    });
  });

  it('the instance topic cap refuses the join that would tail one topic too many, naming it; an emptied room frees its place', async () => {
    // Three topics: the direct-message topic and two rooms.
    await withInstance({ maxTopics: 3 }, async (one, clients) => {
      const [x, y] = [await Client.connect(one.rooms.port), await Client.connect(one.rooms.port)];
      clients.push(x, y);
      expect((await x.join('a')).t).toBe('joined');
      expect((await x.join('b')).t).toBe('joined');
      expect(await y.join('c')).toMatchObject({ t: 'error', code: 'ROOM_CAP_REACHED', cap: 'rooms.maxTopics' });
      // A room already tailed here costs nothing more.
      expect((await y.join('a')).t).toBe('joined');
      await one.rooms.broadcast('a', 'still fine');
      await y.waitCount('a', 1);
      x.send({ t: 'leave', room: 'b' });
      await x.wait((f) => f.t === 'left' && f.room === 'b');
      // A fresh socket: a client's wait matches from its first frame, and y's has the refusal for c.
      const z = await Client.connect(one.rooms.port);
      clients.push(z);
      expect((await z.join('c')).t).toBe('joined');
      expect((await one.rooms.status()).counters.capRefusals).toBe(1);
    });
    await expect(instance(fresh, 'cap', { maxTopics: 1_025 })).rejects.toMatchObject({ code: 'ROOM_INVALID_OPTION', option: 'rooms.maxTopics' });
    await expect(instance(fresh, 'cap', { maxTopics: 1 })).rejects.toMatchObject({ option: 'rooms.maxTopics' });
  });

  it('an SSE client joins and leaves after connect by POST as its session; strangers are refused by status', async () => {
    await withInstance({ authenticate, maxMessageBytes: 1_024 }, async (one) => {
      const stream = await sse(one.rooms.port, { authorization: 'Bearer alice' });
      try {
        await until(() => stream.events.some((e) => e.data.t === 'hello'), 'hello');
        const hello = stream.events.find((e) => e.data.t === 'hello')!.data;
        expect(hello.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
        const frame = (extra: object): string => JSON.stringify({ socket: hello.socket, token: hello.token, ...extra });
        // Not authenticated, another session, a wrong token, an unknown socket, a body past the cap, not JSON.
        expect((await post(one.rooms.port, frame({ t: 'join', room: 'late' }), {})).status).toBe(401);
        expect((await post(one.rooms.port, frame({ t: 'join', room: 'late' }), { authorization: 'Bearer mallory' })).status).toBe(403);
        expect((await post(one.rooms.port, JSON.stringify({ socket: hello.socket, token: 'A'.repeat(43), t: 'join', room: 'late' }), { authorization: 'Bearer alice' })).status).toBe(403);
        expect((await post(one.rooms.port, JSON.stringify({ socket: 'nobody-1', token: hello.token, t: 'join', room: 'late' }), { authorization: 'Bearer alice' })).status).toBe(403);
        expect(await post(one.rooms.port, frame({ t: 'publish', room: 'late', data: 'x'.repeat(2_000) }), { authorization: 'Bearer alice' })).toEqual({ status: 413, cap: 'rooms.maxMessageBytes' });
        expect((await post(one.rooms.port, '{', { authorization: 'Bearer alice' })).status).toBe(400);
        await one.rooms.broadcast('late', 'before the join');
        expect(stream.events.some((e) => e.data.t === 'joined')).toBe(false);

        expect((await post(one.rooms.port, frame({ t: 'join', room: 'late' }), { authorization: 'Bearer alice' })).status).toBe(202);
        await until(() => stream.events.some((e) => e.data.t === 'joined' && e.data.room === 'late'), 'joined');
        await one.rooms.broadcast('late', 'after the join');
        await until(() => stream.events.some((e) => e.data.t === 'msg'), 'the message');
        const msgs = stream.events.filter((e) => e.data.t === 'msg');
        expect(msgs.map((e) => e.data.data)).toEqual(['after the join']);
        // The event id carries the new room's position, for a Last-Event-ID reconnect.
        expect(msgs[0]!.id).toBe('late:2');
        expect((await post(one.rooms.port, frame({ t: 'leave', room: 'late' }), { authorization: 'Bearer alice' })).status).toBe(202);
        await until(() => stream.events.some((e) => e.data.t === 'left'), 'left');
        await one.rooms.broadcast('late', 'after the leave');
        await sleep(300);
        expect(stream.events.filter((e) => e.data.t === 'msg')).toHaveLength(1);
      } finally {
        stream.close();
      }
    });
  });
});
