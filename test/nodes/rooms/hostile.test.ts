/**
 * Hostile clients against one instance on the Postgres bus: each is bounded, refused or counted,
 * and a well-behaved socket in the same room is not affected. Also the socket cap, the auth hook
 * and an SSE client resuming by Last-Event-ID.
 */
import { createConnection, type Socket } from 'node:net';
import { request } from 'node:http';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { sleep } from '../../support/systems.js';
import { Client, instance, type Instance } from './support.js';

let fresh: FreshDatabase;
beforeAll(() => {
  fresh = freshDatabase('rooms_hostile');
});
afterAll(() => fresh.drop());

async function withInstance(options: Parameters<typeof instance>[2], body: (one: Instance, clients: Client[]) => Promise<void>): Promise<void> {
  const one = await instance(fresh, `h${Math.random().toString(36).slice(2, 8)}`, options);
  const clients: Client[] = [];
  try {
    await body(one, clients);
  } finally {
    for (const client of clients) await client.close();
    await one.stop();
  }
}

const authorize = (user: unknown, room: string): boolean => !room.startsWith('secret') || (user as { admin?: boolean }).admin === true;
const authenticate = (req: import('node:http').IncomingMessage): unknown => (req.headers.authorization === 'Bearer bad' ? undefined : { admin: req.headers.authorization === 'Bearer admin' });

describe('hostile clients', () => {
  it('a forbidden room, a forged seq, a flood of joins and an oversized frame are each refused by name; the neighbour is unaffected', async () => {
    const registry = new Registry();
    await withInstance({ authorize, authenticate, maxMessageBytes: 1_024, joinRatePerSecond: 5, metrics: registry }, async (one, clients) => {
      const good = await Client.connect(one.rooms.port);
      const bad = await Client.connect(one.rooms.port);
      clients.push(good, bad);
      await good.join('lobby');
      expect(await bad.join('secret-plans')).toMatchObject({ t: 'error', code: 'ROOM_FORBIDDEN' });
      const admin = await Client.connect(one.rooms.port, { authorization: 'Bearer admin' });
      clients.push(admin);
      expect((await admin.join('secret-plans')).t).toBe('joined');
      await expect(Client.connect(one.rooms.port, { authorization: 'Bearer bad' })).rejects.toThrow(/refused 401/);

      await one.rooms.broadcast('lobby', 'one');
      expect(await bad.join('lobby', 1_000_000)).toMatchObject({ t: 'error', code: 'ROOM_BAD_SEQ' });
      for (let i = 0; i < 10; i++) bad.send({ t: 'join', room: `r${i}` });
      const refusal = await bad.wait((f) => f.t === 'error' && f.code === 'ROOM_CAP_REACHED');
      expect(refusal.cap).toBe('rooms.joinRatePerSecond');

      bad.send({ t: 'publish', room: 'lobby', data: 'x'.repeat(2_000) });
      await eventuallyClosed(bad);
      expect(bad.closed!.code).toBe(1009);

      await one.rooms.broadcast('lobby', 'two');
      await good.waitCount('lobby', 2);
      expect(good.msgs('lobby').map((f) => f.data)).toEqual(['one', 'two']);
      const status = await one.rooms.status();
      expect(status.counters).toMatchObject({ forbidden: 1, forgedSeq: 1, refused: 1 });
      expect(status.counters.capRefusals).toBeGreaterThanOrEqual(1);
      const text = await registry.metrics();
      expect(text).toMatch(/molo_rooms_events_total\{instance="h\w+",event="forgedSeq"\} 1/);
      expect(text).toMatch(/molo_rooms_sockets\{instance="h\w+"\} [23]/);
    });
  });

  it('a frame flood closes that socket with 4029 naming the cap', async () => {
    await withInstance({ messageRatePerSecond: 20 }, async (one, clients) => {
      const flood = await Client.connect(one.rooms.port);
      clients.push(flood);
      for (let i = 0; i < 200; i++) flood.send({ t: 'leave', room: 'none' });
      await eventuallyClosed(flood);
      expect(flood.closed).toEqual({ code: 4029, reason: 'rooms.messageRatePerSecond' });
    });
  });

  it('a never-reading socket: drop-oldest bounds its queue and counts the drops; close closes it with 4008; a reader gets everything', async () => {
    for (const policy of ['drop-oldest', 'close'] as const) {
      await withInstance({ sendQueueMax: 50, sendQueuePolicy: policy }, async (one, clients) => {
        const reader = await Client.connect(one.rooms.port);
        clients.push(reader);
        await reader.join('firehose');
        const stuck = await neverReading(one.rooms.port, 'firehose');
        try {
          const big = 'y'.repeat(16_000);
          for (let i = 0; i < 400; i++) await one.rooms.broadcast('firehose', { i, big });
          await reader.waitCount('firehose', 400, 15_000);
          await sleep(200);
          const status = await one.rooms.status();
          if (policy === 'drop-oldest') {
            expect(status.counters.dropped).toBeGreaterThan(0);
            expect(status.queued).toBeLessThanOrEqual(50);
          } else expect(status.counters.closedSlow).toBe(1);
        } finally {
          stuck.destroy();
        }
      });
    }
  }, 40_000);

  it('the socket cap refuses the upgrade with 503 naming it', async () => {
    await withInstance({ maxSockets: 2 }, async (one, clients) => {
      clients.push(await Client.connect(one.rooms.port), await Client.connect(one.rooms.port));
      await expect(Client.connect(one.rooms.port)).rejects.toThrow(/refused 503 rooms\.maxSockets/);
    });
  });

  it('an unknown option is refused naming the nearest', async () => {
    await expect(instance(fresh, 'opt', { maxRoomsPerSockets: 3 } as never)).rejects.toThrow(/did you mean maxRoomsPerSocket\?/);
  });

  it('SSE: events carry positions in their id; a reconnect with Last-Event-ID resumes with no duplicate', async () => {
    await withInstance({}, async (one) => {
      const first = await sse(one.rooms.port, 'news', undefined);
      await eventuallyTrue(() => first.events.some((e) => e.data.t === 'joined'));
      for (let i = 0; i < 3; i++) await one.rooms.broadcast('news', i);
      await eventuallyTrue(() => first.events.filter((e) => e.data.t === 'msg').length === 3);
      const lastId = first.events.at(-1)!.id;
      first.close();
      for (let i = 3; i < 5; i++) await one.rooms.broadcast('news', i);
      const second = await sse(one.rooms.port, 'news', lastId);
      await eventuallyTrue(() => second.events.filter((e) => e.data.t === 'msg').length === 2);
      expect(second.events.filter((e) => e.data.t === 'msg').map((e) => e.data.data)).toEqual([3, 4]);
      second.close();
    });
  });
});

async function eventuallyTrue(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(5);
  }
}

async function eventuallyClosed(client: Client): Promise<void> {
  await eventuallyTrue(() => client.closed !== undefined);
}

/** A raw socket that upgrades, joins `room`, then never reads again (its receive window fills). */
async function neverReading(port: number, room: string): Promise<Socket> {
  const socket = createConnection({ port, host: '127.0.0.1' });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(`GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  const payload = Buffer.from(JSON.stringify({ t: 'join', room }));
  const mask = Buffer.from([1, 2, 3, 4]);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  socket.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]));
  await sleep(100);
  socket.pause();
  return socket;
}

interface SseEvent {
  readonly id: string;
  readonly data: { t: string; data?: unknown };
}

async function sse(port: number, room: string, lastId: string | undefined): Promise<{ events: SseEvent[]; close(): void }> {
  const events: SseEvent[] = [];
  const req = request({ port, host: '127.0.0.1', path: `/rooms/events?rooms=${room}`, headers: lastId === undefined ? {} : { 'last-event-id': lastId } });
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
          if (id !== undefined && data !== undefined) events.push({ id, data: JSON.parse(data) as SseEvent['data'] });
        }
      });
      resolve();
    });
    req.on('error', reject);
    req.end();
  });
  return { events, close: () => req.destroy() };
}
