/**
 * The Socket.IO adapter over a real bus (Postgres; the first scenario also on NATS and the node bus): two Socket.IO servers in this process on two
 * ports, each its own actor system, pool and bus (as two instances), and socket.io-client clients.
 * A broadcast from either server reaches the clients of both (to everyone and to a room); a client
 * whose transport drops and comes back is recovered (`socket.recovered`) with exactly the packets it
 * missed, from both servers, read back from the bus by sequence, on its server or the other one
 * (sessions are shared on the bus); one whose offset is past retention
 * is not recovered, rather than handed a hole.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { io as connect, type Socket as ClientSocket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMoloAdapter, type Bus } from '../../../src/nodes/index.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { sleep } from '../../support/systems.js';
import { instance, type BusKind } from './support.js';

let fresh: FreshDatabase;
beforeAll(() => {
  fresh = freshDatabase('rooms_socketio');
});
afterAll(() => fresh.drop());

interface IoInstance {
  readonly io: Server;
  readonly port: number;
  readonly bus: Bus;
  /** One retention pass (Postgres); JetStream evicts as it stores. */
  retain(): Promise<void>;
  stop(): Promise<void>;
}

let instances = 0;

/** A Socket.IO server over a bus of `kind` (support.ts's instance: its own system, pool and bus). */
async function ioInstance(kind: BusKind = 'postgres', retention?: { maxMsgs: number }): Promise<IoInstance> {
  const base = await instance(fresh, `io${++instances}`, { busKind: kind, retention });
  const http: HttpServer = createServer();
  const io = new Server(http, { adapter: createMoloAdapter(base.bus, { heartbeatInterval: 200 }), connectionStateRecovery: { maxDisconnectionDuration: 30_000 } });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));
  return {
    io,
    port: (http.address() as AddressInfo).port,
    bus: base.bus,
    retain: () => base.retain(),
    async stop() {
      await io.close();
      await base.stop();
    },
  };
}

class Client {
  readonly events: unknown[] = [];
  private constructor(readonly socket: ClientSocket) {
    socket.on('news', (value: unknown) => this.events.push(value));
  }
  static async connect(port: number): Promise<Client> {
    const socket = connect(`http://127.0.0.1:${port}`, { transports: ['websocket'], reconnectionDelay: 400, randomizationFactor: 0 });
    const client = new Client(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    return client;
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('the Socket.IO adapter over the bus', () => {
  // The adapter speaks only the Bus interface: the same scenario on each bus a deployment can pick.
  it.each(['postgres', 'nats', 'node'] as const)('on the %s bus: a broadcast reaches the clients of both servers; a client that drops briefly is recovered with exactly what it missed', { timeout: 30_000 }, async (kind) => {
    const [a, b] = [await ioInstance(kind), await ioInstance(kind)];
    const clients: Client[] = [];
    try {
      // Each server has heard the other's heartbeat: both tail the bus.
      await until(async () => (await a.io.of('/').adapter.serverCount()) === 2 && (await b.io.of('/').adapter.serverCount()) === 2, 'two servers');
      a.io.on('connection', (socket) => void socket.join('r'));
      const [onA, onB] = [await Client.connect(a.port), await Client.connect(b.port)];
      clients.push(onA, onB);
      // Emits are not awaitable: a pause between two from different servers fixes their order on the bus.
      b.io.emit('news', 'from b');
      await sleep(150);
      a.io.emit('news', 'from a');
      await until(() => onA.events.length === 2 && onB.events.length === 2, 'two events each');
      expect(onA.events).toEqual(['from b', 'from a']);
      expect(onB.events).toEqual(['from b', 'from a']);
      // To a room of A's sockets, from B.
      b.io.to('r').emit('news', 'to r');
      await until(() => onA.events.length === 3, 'the room event');
      await sleep(200);
      expect(onB.events).toHaveLength(2);

      // The transport drops; while the client is away both servers broadcast.
      const serverSide = [...a.io.sockets.sockets.values()][0]!;
      const gone = new Promise<void>((resolve) => serverSide.once('disconnect', () => resolve()));
      const firstId = onA.socket.id;
      onA.socket.io.engine.close();
      await gone;
      b.io.emit('news', 'missed 1');
      await sleep(150);
      a.io.emit('news', 'missed 2');
      await sleep(150);
      b.io.to('r').emit('news', 'missed 3');
      b.io.except('r').emit('news', 'not for A');
      await until(() => onB.events.length === 5, 'B live');
      await new Promise<void>((resolve) => onA.socket.once('connect', () => resolve()));
      expect(onA.socket.recovered).toBe(true);
      expect(onA.socket.id).toBe(firstId);
      await until(() => onA.events.length === 6, 'the missed events');
      b.io.emit('news', 'live again');
      await until(() => onA.events.length === 7, 'live after the recovery');
      await sleep(200);
      expect(onA.events).toEqual(['from b', 'from a', 'to r', 'missed 1', 'missed 2', 'missed 3', 'live again']);
      // Still in its room after the recovery.
      b.io.to('r').emit('news', 'r again');
      await until(() => onA.events.length === 8, 'the room after the recovery');
    } finally {
      for (const client of clients) client.socket.disconnect();
      await a.stop();
      await b.stop();
    }
  });

  it('a client that comes back through the other server is recovered there: sessions are shared on the bus', { timeout: 30_000 }, async () => {
    const [a, b] = [await ioInstance(), await ioInstance()];
    try {
      await until(async () => (await a.io.of('/').adapter.serverCount()) === 2 && (await b.io.of('/').adapter.serverCount()) === 2, 'two servers');
      a.io.on('connection', (socket) => void socket.join('r'));
      const client = await Client.connect(a.port);
      try {
        a.io.emit('news', 'before');
        await until(() => client.events.length === 1, 'the first event');
        const socket = [...a.io.sockets.sockets.values()][0]!;
        const gone = new Promise<void>((resolve) => socket.once('disconnect', () => resolve()));
        // The balancer sends it elsewhere next time.
        (client.socket.io as unknown as { uri: string }).uri = `http://127.0.0.1:${b.port}`;
        client.socket.io.engine.close();
        await gone;
        a.io.to('r').emit('news', 'missed from a');
        await sleep(150);
        b.io.emit('news', 'missed from b');
        await new Promise<void>((resolve) => client.socket.once('connect', () => resolve()));
        expect(client.socket.recovered).toBe(true);
        await until(() => client.events.length === 3, 'the missed events');
        expect(client.events).toEqual(['before', 'missed from a', 'missed from b']);
        // Recovered on b with its rooms: a room broadcast from a reaches it there.
        expect([...b.io.sockets.sockets.values()][0]!.rooms.has('r')).toBe(true);
        a.io.to('r').emit('news', 'to r on b');
        await until(() => client.events.length === 4, 'the room event on b');
      } finally {
        client.socket.disconnect();
      }
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('a client whose missed packets are past retention is not recovered, and gets a fresh session', { timeout: 30_000 }, async () => {
    const [a, b] = [await ioInstance('postgres', { maxMsgs: 2 }), await ioInstance('postgres', { maxMsgs: 2 })];
    try {
      await until(async () => (await a.io.of('/').adapter.serverCount()) === 2, 'two servers');
      const client = await Client.connect(a.port);
      try {
        b.io.emit('news', 0);
        await until(() => client.events.length === 1, 'the first event');
        const socket = [...a.io.sockets.sockets.values()][0]!;
        const gone = new Promise<void>((resolve) => socket.once('disconnect', () => resolve()));
        client.socket.io.engine.close();
        await gone;
        for (let i = 1; i <= 5; i++) b.io.emit('news', i);
        await sleep(300);
        await b.retain();
        await new Promise<void>((resolve) => client.socket.once('connect', () => resolve()));
        expect(client.socket.recovered).toBe(false);
        expect(() => createMoloAdapter(a.bus, { prefx: 'x' } as never)).toThrow(/did you mean prefix\?/);
        expect(() => createMoloAdapter(a.bus, { sessionWaitMs: 60_000 })).toThrow(expect.objectContaining({ code: 'ROOM_INVALID_OPTION', option: 'socketio.sessionWaitMs' }));
      } finally {
        client.socket.disconnect();
      }
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
