/**
 * The systems of the `rooms` suite, each as two instances (A and B, two servers in this process on
 * two ports, each with its own connections to its backend, as two app instances would have) and
 * real clients connected to one of them:
 * - Molo rooms over WebSocket (`ws` clients) on the Postgres bus, the NATS bus and the node bus;
 * - Socket.IO with @socket.io/redis-adapter (ioredis, a publisher and its duplicate as subscriber);
 * - Socket.IO with @socket.io/postgres-adapter (a pg.Pool per server, its attachments table made);
 * - Socket.IO with Molo's adapter `createMoloAdapter` on the Postgres bus.
 * Socket.IO clients are socket.io-client with `transports: ['websocket']` (no sticky sessions needed)
 * and `forceNew` (one connection per client, not one multiplexed manager).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import WebSocket from 'ws';
import { ActorSystem } from '../../src/actors/index.js';
import { createPostgresPool, type PostgresDatabase } from '../../src/data/index.js';
import { createMoloAdapter, natsBus, nodeBus, postgresBus, startNode, startRooms, type Bus, type Node, type Rooms } from '../../src/nodes/index.js';
import type { BenchServer } from '../data/server.js';
import { REDIS_HOST, REDIS_PORT } from '../kv/redis.js';
import { benchLog, messageOf } from '../suite.js';

/** What every broadcast carries: its round, its index and when it was sent (performance.now()). */
export interface Payload {
  readonly r: number;
  readonly i: number;
  readonly t: number;
  readonly p: string;
}

export type Side = 'a' | 'b';
export type OnMessage = (client: number, data: Payload) => void;

export const ROOM = 'bench';

export interface RoomsSystem {
  readonly impl: string;
  /** What the system is, for the table's notes. */
  readonly what: string;
  /** What an acknowledged broadcast promised, filled in by `open`. */
  durability: string;
  open(): Promise<void>;
  /** Connects one client per entry of `sides`, each in ROOM; every delivery calls `onMessage`. */
  connect(sides: readonly Side[], onMessage: OnMessage): Promise<void>;
  /** One server-side broadcast to ROOM from instance A (a promise where the API gives one). */
  broadcast(data: Payload): Promise<unknown> | void;
  disconnect(): Promise<void>;
  close(): Promise<void>;
}

export interface Settings {
  /** `postgres synchronous_commit=… fsync=…`, read from the server. */
  readonly postgres: string;
  /** `redis appendonly=… appendfsync=… save=…`, read from the server. */
  readonly redis: string;
}

/** Connects in batches: a few hundred handshakes at once only measure the accept queue. */
async function inBatches<T>(count: number, make: (index: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += 50) out.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, k) => make(i + k)))));
  return out;
}

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const listen = (http: HttpServer): Promise<number> =>
  new Promise((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', () => resolve((http.address() as AddressInfo).port));
  });

// ---------------------------------------------------------------------------------------------
// Molo rooms over WebSocket

/** A WebSocket client of Molo rooms: joins ROOM, hands each `msg` frame's data on. */
async function roomsClient(port: number, index: number, onMessage: OnMessage): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
  await new Promise<void>((resolve, reject) => {
    let joined = false;
    ws.on('message', (raw) => {
      const frame = JSON.parse(raw.toString()) as { t: string; room?: string; data?: Payload; code?: string };
      if (frame.t === 'msg') onMessage(index, frame.data!);
      else if (frame.t === 'hello') ws.send(JSON.stringify({ t: 'join', room: ROOM }));
      else if (frame.t === 'joined' && !joined) {
        joined = true;
        resolve();
      } else if (frame.t === 'error' || frame.t === 'gap') reject(new Error(`rooms client ${index}: ${JSON.stringify(frame)}`));
    });
    ws.once('error', reject);
  });
  return ws;
}

const closeWs = (ws: WebSocket): Promise<void> =>
  ws.readyState === WebSocket.CLOSED
    ? Promise.resolve()
    : new Promise((resolve) => {
        ws.once('close', () => resolve());
        ws.close();
      });

interface MoloInstance {
  readonly rooms: Rooms;
  close(): Promise<void>;
}

export type MoloBusKind = 'postgres' | 'nats' | 'node';

/**
 * Molo rooms on one bus. Defaults everywhere (poll interval, retention, caps) but `sendQueueMax`,
 * raised to the burst's size: at the default (1,000, drop-oldest) a client behind by more than
 * that in the fan-out burst would be handed a gap, and the case counts every message delivered.
 */
export function moloRooms(kind: MoloBusKind, pgServer: BenchServer | undefined, settings: Settings, sendQueueMax: number): RoomsSystem {
  const instances: MoloInstance[] = [];
  const clients: WebSocket[] = [];
  const run = randomBytes(4).toString('hex');
  const natsPrefix = `RBENCH_${run.toUpperCase()}`;
  let dir: string | undefined;
  let homeName: string | undefined;

  const start = async (side: Side): Promise<MoloInstance> => {
    let node: Node | undefined;
    let system: ActorSystem;
    let db: PostgresDatabase | undefined;
    let bus: Bus;
    if (kind === 'node') {
      node = await startNode({ name: `rbench-${side}-${run}@127.0.0.1:0`, secret: `molo-bench-rooms-secret-${run}-0123456789`, system: { logger: false } });
      system = node.system;
      // A homes the room's topic (a SQLite stream file); B reaches it over the link.
      if (side === 'a') {
        homeName = node.name;
        dir = mkdtempSync(join(tmpdir(), 'molo-bench-rooms-'));
        bus = await nodeBus(node, { members: [homeName], file: join(dir, 'bus.db') });
      } else {
        await node.connect(homeName!);
        bus = await nodeBus(node, { members: [homeName!] });
      }
    } else {
      system = new ActorSystem({ node: `rbench-${kind}-${side}`, logger: false });
      if (kind === 'nats') bus = await natsBus({ prefix: natsPrefix });
      else {
        if (pgServer === undefined) throw new Error('postgres unavailable');
        db = await createPostgresPool(system, { host: pgServer.host, port: pgServer.port, user: pgServer.user, database: pgServer.database });
        bus = await postgresBus(db, { table: 'rbench_rooms' });
      }
    }
    const rooms = await startRooms(system, { bus, instance: `rbench-${side}`, host: '127.0.0.1', sendQueueMax });
    return {
      rooms,
      async close() {
        await rooms.stop();
        await bus.close();
        await db?.close();
        if (node !== undefined) await node.stop();
        else system.shutdown();
      },
    };
  };

  return {
    impl: `molo-${kind}`,
    what: `Molo rooms (ws) on the ${kind} bus`,
    durability: '',
    async open() {
      this.durability =
        kind === 'postgres'
          ? `durable: each broadcast appended to the room's stream (Postgres) before NOTIFY; ${settings.postgres}`
          : kind === 'nats'
          ? 'durable: each broadcast a JetStream message (stream per room, file storage, server default sync: fsync every 2 min)'
          : 'durable: each broadcast appended to the room\'s stream in the home node\'s SQLite file, synchronous=normal (WAL)';
      instances.push(await start('a'));
      instances.push(await start('b'));
    },
    async connect(sides, onMessage) {
      const ports = { a: instances[0]!.rooms.port, b: instances[1]!.rooms.port };
      clients.push(...(await inBatches(sides.length, (i) => roomsClient(ports[sides[i]!], i, onMessage))));
    },
    broadcast: (data) => instances[0]!.rooms.broadcast(ROOM, data),
    async disconnect() {
      await Promise.all(clients.splice(0).map(closeWs));
    },
    async close() {
      await this.disconnect();
      for (const instance of instances.splice(0).reverse()) await instance.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      if (kind === 'nats') await dropNatsStreams(natsPrefix).catch(() => undefined);
    },
  };
}

async function dropNatsStreams(prefix: string): Promise<void> {
  const { connect } = await import('nats');
  const nc = await connect({ servers: '127.0.0.1:4222' });
  try {
    const jsm = await nc.jetstreamManager();
    const names: string[] = [];
    for await (const name of jsm.streams.names()) if (name.startsWith(prefix)) names.push(name);
    for (const name of names) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Socket.IO

type IoServer = import('socket.io').Server;
type IoClient = import('socket.io-client').Socket;

interface IoInstance {
  readonly io: IoServer;
  readonly port: number;
  close(): Promise<void>;
}

/** A Socket.IO server on its own port, each connection put in ROOM. */
async function ioServer(adapter: unknown, release: () => Promise<void>): Promise<IoInstance> {
  const { Server } = await import('socket.io');
  const http = createServer();
  const io = new Server(http, { adapter: adapter as never });
  io.on('connection', (socket) => void socket.join(ROOM));
  const port = await listen(http);
  return {
    io,
    port,
    async close() {
      await io.close();
      await release();
    },
  };
}

/** The local members of ROOM on a Socket.IO server. */
const localMembers = (io: IoServer): number => io.of('/').adapter.rooms.get(ROOM)?.size ?? 0;

function socketIo(impl: string, what: string, durability: (settings: Settings) => string, settings: Settings, start: (side: Side) => Promise<IoInstance>, before?: () => Promise<void>): RoomsSystem {
  const instances: IoInstance[] = [];
  const clients: IoClient[] = [];
  return {
    impl,
    what,
    durability: '',
    async open() {
      this.durability = durability(settings);
      await before?.();
      instances.push(await start('a'));
      instances.push(await start('b'));
    },
    async connect(sides, onMessage) {
      const { io } = await import('socket.io-client');
      const ports = { a: instances[0]!.port, b: instances[1]!.port };
      const made = await inBatches(sides.length, async (i) => {
        const socket = io(`http://127.0.0.1:${ports[sides[i]!]}`, { transports: ['websocket'], forceNew: true, reconnection: false });
        socket.on('m', (data: Payload) => onMessage(i, data));
        await new Promise<void>((resolve, reject) => {
          socket.once('connect', () => resolve());
          socket.once('connect_error', reject);
        });
        return socket;
      });
      clients.push(...made);
      const total = clients.length;
      await until(() => localMembers(instances[0]!.io) + localMembers(instances[1]!.io) === total, `${total} sockets in the room`);
    },
    broadcast(data) {
      instances[0]!.io.to(ROOM).emit('m', data);
    },
    async disconnect() {
      for (const socket of clients.splice(0)) socket.disconnect();
      await until(() => instances.every((instance) => localMembers(instance.io) === 0), 'the sockets to go', 5_000).catch(() => undefined);
    },
    async close() {
      await this.disconnect();
      for (const instance of instances.splice(0).reverse()) await instance.close();
    },
  };
}

interface IoRedis {
  duplicate(): IoRedis;
  quit(): Promise<unknown>;
  disconnect(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Socket.IO with @socket.io/redis-adapter, set up as its README shows: a publisher and `duplicate()` as subscriber. */
export function socketIoRedis(settings: Settings): RoomsSystem {
  const key = `rbench-${randomBytes(4).toString('hex')}`;
  return socketIo(
    'socketio-redis',
    'Socket.IO + @socket.io/redis-adapter (ioredis)',
    (s) => `not durable: Redis PUBLISH, held nowhere (${s.redis}: persistence covers keys, not pub/sub)`,
    settings,
    async () => {
      const Redis = ((await import('ioredis')) as unknown as { default: new (options: Record<string, unknown>) => IoRedis }).default;
      const { createAdapter } = await import('@socket.io/redis-adapter');
      const pub = new Redis({ host: REDIS_HOST, port: REDIS_PORT });
      const sub = pub.duplicate();
      // ioredis reconnects by itself; an error is still worth a line (a figure without B's deliveries would be a lie).
      pub.on('error', (error) => benchLog(`socketio-redis: publisher: ${messageOf(error)}`));
      sub.on('error', (error) => benchLog(`socketio-redis: subscriber: ${messageOf(error)}`));
      return ioServer(createAdapter(pub, sub, { key }), async () => {
        await pub.quit().catch(() => pub.disconnect());
        await sub.quit().catch(() => sub.disconnect());
      });
    },
  );
}

/** Socket.IO with @socket.io/postgres-adapter, as its README shows: a pg.Pool per server and the attachments table. */
export function socketIoPostgres(pgServer: BenchServer | undefined, settings: Settings): RoomsSystem {
  const tableName = 'rbench_sio_attachments';
  const pool = (): pg.Pool => {
    if (pgServer === undefined) throw new Error('postgres unavailable');
    const made = new pg.Pool({ host: pgServer.host, port: pgServer.port, user: pgServer.user, database: pgServer.database });
    made.on('error', () => undefined);
    return made;
  };
  return socketIo(
    'socketio-postgres',
    'Socket.IO + @socket.io/postgres-adapter (pg)',
    () => 'not durable: NOTIFY, held nowhere (payloads over 8,000 bytes go through a table)',
    settings,
    async () => {
      const { createAdapter } = await import('@socket.io/postgres-adapter');
      const made = pool();
      return ioServer(createAdapter(made, { tableName, channelPrefix: 'rbench_sio' }), () => made.end());
    },
    async () => {
      const made = pool();
      try {
        await made.query(`CREATE TABLE IF NOT EXISTS ${tableName} (id bigserial UNIQUE, created_at timestamptz DEFAULT NOW(), payload bytea)`);
      } finally {
        await made.end();
      }
    },
  );
}

/** Socket.IO with Molo's adapter on the Postgres bus (an actor system, pool and bus per server). */
export function socketIoMolo(pgServer: BenchServer | undefined, settings: Settings): RoomsSystem {
  return socketIo(
    'molo-socketio',
    'Socket.IO + createMoloAdapter on the postgres bus',
    (s) => `durable: each broadcast appended to the namespace's stream (Postgres) before NOTIFY; ${s.postgres}`,
    settings,
    async (side) => {
      if (pgServer === undefined) throw new Error('postgres unavailable');
      const system = new ActorSystem({ node: `rbench-sio-${side}`, logger: false });
      const db = await createPostgresPool(system, { host: pgServer.host, port: pgServer.port, user: pgServer.user, database: pgServer.database });
      const bus = await postgresBus(db, { table: 'rbench_sio_molo' });
      return ioServer(createMoloAdapter(bus), async () => {
        await bus.close();
        await db.close();
        system.shutdown();
      });
    },
  );
}
