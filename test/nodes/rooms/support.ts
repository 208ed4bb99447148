/**
 * Rooms test support: instances (each its own actor system and Postgres pool on one shared test
 * database, as separate app instances would be), and real `ws` clients that record every frame.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { ActorSystem } from '../../../src/actors/index.js';
import { createPostgresPool, type PostgresDatabase } from '../../../src/data/index.js';
import { natsBus, nodeBus, postgresBus, postgresPresence, startNode, startRooms, type Bus, type Node, type Rooms, type RoomsOptions } from '../../../src/nodes/index.js';
import { atFileStart } from '../../support/file-hooks.js';
import type { FreshDatabase } from '../../support/pg.js';
import { testSystem } from '../../support/systems.js';

export interface Instance {
  readonly system: ActorSystem;
  readonly db: PostgresDatabase;
  readonly bus: Bus;
  /** One retention pass (Postgres); JetStream evicts as it stores. */
  retain(): Promise<void>;
  readonly rooms: Rooms;
  stop(): Promise<void>;
}

export type BusKind = 'postgres' | 'nats' | 'node';
/**
 * The node bus: the first instance started while none is running homes every topic (its own SQLite
 * file, a fresh one each time), and the ones started after it connect to it. Tests stop all their
 * instances between scenarios, so each scenario has a home of its own.
 */
let nodeHome: Node | undefined;
const nodeBusDir = mkdtempSync(join(tmpdir(), 'molo-rooms-node-bus-'));
let nodeBusFiles = 0;
/** Per test file: NATS streams of one file never meet another's (nor another run's). */
const newNatsPrefix = (): string => `MOLO_T${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
let natsPrefix = newNatsPrefix();
// Where files share the module cache (one evaluation per fork), each file starts as in a fresh
// module: a file that failed before stopping its instances leaves the next no home of its own.
atFileStart(() => {
  nodeHome = undefined;
  natsPrefix = newNatsPrefix();
});

export async function instance(
  fresh: FreshDatabase,
  name: string,
  options: Partial<RoomsOptions> & { retention?: { maxMsgs?: number }; presenceTtlMs?: number; busKind?: BusKind } = {},
): Promise<Instance> {
  const { retention, presenceTtlMs, busKind = 'postgres', ...rest } = options;
  const node = busKind === 'node' ? await startNode({ name: `${name}@127.0.0.1:0`, secret: 'molo-test-rooms-secret-0123456789', system: { logger: false } }) : undefined;
  const system = node?.system ?? testSystem({ node: name });
  let home: Node | undefined;
  if (node !== undefined) {
    if (nodeHome === undefined) nodeHome = node;
    else await node.connect(nodeHome.name);
    home = nodeHome;
  }
  const db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 1, max: 4 });
  // Topic streams of another retention live under their own table (instances of one bus agree on it).
  const bus =
    node !== undefined
      ? await nodeBus(node, { members: [home!.name], file: home === node ? join(nodeBusDir, `bus-${nodeBusFiles++}.db`) : undefined, retention, pollIntervalMs: 200, retentionIntervalMs: 0 })
      : busKind === 'nats'
      ? await natsBus({ prefix: retention === undefined ? natsPrefix : `${natsPrefix}_S`, retention })
      : await postgresBus(db, { pollIntervalMs: 200, retentionIntervalMs: 0, retention, table: retention === undefined ? undefined : 'molo_bus_short' });
  let rooms: Rooms;
  try {
    const presence = presenceTtlMs === undefined ? undefined : await postgresPresence(db, { ttlMs: presenceTtlMs });
    rooms = await startRooms(system, { bus, instance: name, presence, ...rest });
  } catch (error) {
    await bus.close();
    await db.close();
    await stopNode(node);
    throw error;
  }
  return {
    system,
    db,
    bus,
    rooms,
    async retain() {
      if ('enforceRetention' in bus) await (bus as { enforceRetention(): Promise<number> }).enforceRetention();
    },
    async stop() {
      await rooms.stop();
      await bus.close();
      await db.close();
      await stopNode(node);
    },
  };
}

async function stopNode(node: Node | undefined): Promise<void> {
  if (node === undefined) return;
  if (nodeHome === node) nodeHome = undefined;
  await node.stop();
}

export interface Frame {
  readonly t: string;
  readonly room?: string;
  readonly seq?: number;
  readonly data?: unknown;
  readonly from?: number;
  readonly to?: number;
  readonly code?: string;
  readonly cap?: string;
  readonly socket?: string;
  readonly event?: string;
  readonly reason?: string;
}

export class Client {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | undefined;
  socket = '';
  /** The cookie a load balancer set on the upgrade response (name=value), if any. */
  cookie: string | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      if (frame.t === 'hello') this.socket = frame.socket!;
      this.frames.push(frame);
    });
    ws.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
    ws.on('upgrade', (res) => {
      const set = res.headers['set-cookie'];
      if (set !== undefined && set.length > 0) this.cookie = set[0]!.split(';')[0];
    });
    ws.on('error', () => undefined);
  }

  static async connect(port: number, headers: Record<string, string> = {}): Promise<Client> {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers });
    const client = new Client(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode} ${String(res.headers['x-molo-cap'] ?? '')}`)));
      ws.once('error', reject);
    });
    await client.wait((f) => f.t === 'hello');
    return client;
  }

  send(frame: object): void {
    this.ws.send(JSON.stringify(frame));
  }

  async join(room: string, since?: number): Promise<Frame> {
    this.send({ t: 'join', room, since });
    return this.wait((f) => (f.t === 'joined' || f.t === 'error') && f.room === room);
  }

  /** Messages (broadcasts) of `room`, in arrival order. */
  msgs(room: string): Frame[] {
    return this.frames.filter((f) => f.t === 'msg' && f.room === room);
  }

  /** The last sequence seen in `room` (messages, presence, gaps, the join point). */
  last(room: string): number {
    let last = 0;
    for (const f of this.frames) {
      if (f.room !== room) continue;
      if (f.t === 'gap') last = Math.max(last, f.to!);
      else if (f.seq !== undefined) last = Math.max(last, f.seq);
    }
    return last;
  }

  async wait(predicate: (frame: Frame) => boolean, timeoutMs = 5_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    let seen = 0;
    for (;;) {
      for (; seen < this.frames.length; seen++) if (predicate(this.frames[seen]!)) return this.frames[seen]!;
      if (Date.now() > deadline) throw new Error(`no such frame; got ${JSON.stringify(this.frames.slice(-5))}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  async waitCount(room: string, count: number, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.msgs(room).length < count) {
      if (Date.now() > deadline) throw new Error(`${this.msgs(room).length}/${count} messages in ${room}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  async closedOnce(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.closed === undefined) {
      if (Date.now() > deadline) throw new Error('socket not closed');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}

/** Deletes this test file's JetStream streams (the NATS server outlives the run). */
export async function dropNatsStreams(): Promise<void> {
  const { connect } = await import('nats');
  const nc = await connect({ servers: '127.0.0.1:4222' });
  try {
    const jsm = await nc.jetstreamManager();
    const names: string[] = [];
    for await (const name of jsm.streams.names()) if (name.startsWith(natsPrefix)) names.push(name);
    for (const name of names) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}
