/**
 * A Socket.IO adapter over a Molo bus (Postgres, NATS or node transport): `io.adapter(createMoloAdapter(bus))`.
 * Broadcasts of a namespace go to one bus topic, so the topic's sequence orders them and serves as
 * Socket.IO's offset for connection-state recovery: a client that comes back within
 * `maxDisconnectionDuration` names its last offset, and the missed broadcasts are read from the bus
 * (bounded, and refused as unrecoverable if any is past retention, rather than handed out with a hole).
 * Everything else the cluster adapter speaks (heartbeats, socket joins, fetch requests, responses,
 * sessions) goes to a second, control topic of the namespace.
 *
 * socket.io stays an optional peer: only its types are imported, and its adapter module is loaded
 * when the first adapter class is made, from beside the application's socket.io.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { pack, unpack } from 'msgpackr';
import type { BroadcastOptions, ClusterAdapterOptions, ClusterAdapterWithHeartbeat as BaseAdapter, ClusterMessage, ClusterResponse, Offset } from 'socket.io-adapter';
import type { PrivateSessionId, Session } from 'socket.io-adapter';
import { unknownOptionKey } from '../../actors/option-keys.js';
import type { Logger } from '../../telemetry/index.js';
import type { Bus, BusItem, BusSubscription } from '../bus/index.js';
import { InvalidRoomOption } from './errors.js';

export interface MoloAdapterOptions extends ClusterAdapterOptions {
  /** Topic prefix (default `sio`); the servers of one application use the same one. */
  readonly prefix?: string;
  /** Missed packets one recovery hands back at most (default 10,000; ceiling 100,000); more: not recovered. */
  readonly maxRecoveredPackets?: number;
  /** Sessions awaiting their client kept at most per namespace and server (default 100,000). */
  readonly maxSessions?: number;
  /** How long a recovery waits for a session not yet here (it left through another server; default 1,000 ms; ceiling 10,000). */
  readonly sessionWaitMs?: number;
  /** Where a broadcast the bus refused is logged (Socket.IO's emit cannot report it); none: not logged. */
  readonly logger?: Logger;
}

const KNOWN: readonly (keyof MoloAdapterOptions)[] = ['prefix', 'maxRecoveredPackets', 'maxSessions', 'sessionWaitMs', 'logger', 'heartbeatInterval', 'heartbeatTimeout'];
const EVENT = 2;
/** Not recoverable. Socket.IO's own adapters answer null, which its declaration of restoreSession leaves out. */
const NONE = null as unknown as Session;
type Persisted = Parameters<BaseAdapter['persistSession']>[0];

/** What travels on the bus, msgpack in base64 (binary attachments survive every bus's payload encoding). */
type Envelope =
  | { readonly k: 'm'; readonly m: ClusterMessage }
  | { readonly k: 'r'; readonly to: string; readonly m: ClusterResponse }
  | { readonly k: 's'; readonly uid: string; readonly s: Persisted }
  | { readonly k: 'd'; readonly uid: string; readonly pid: string };

interface WirePacket {
  readonly type: number;
  readonly id?: number;
  readonly data: unknown[];
  nsp?: string;
}
interface Broadcast {
  readonly packet: WirePacket;
  readonly opts: { readonly rooms: string[]; readonly except: string[]; readonly flags?: BroadcastOptions['flags'] };
}

const encode = (envelope: Envelope): string => pack(envelope).toString('base64');
const decode = (payload: unknown): Envelope | undefined => {
  if (typeof payload !== 'string') return undefined;
  try {
    return unpack(Buffer.from(payload, 'base64')) as Envelope;
  } catch {
    return undefined;
  }
};

type AdapterModule = typeof import('socket.io-adapter');
type AdapterClass = AdapterModule['Adapter'];
let loaded: AdapterModule | undefined;

function adapterModule(): AdapterModule {
  if (loaded !== undefined) return loaded;
  try {
    // Beside the application's socket.io: the adapter module is its dependency, not ours.
    const fromSocketIo = createRequire(createRequire(import.meta.url).resolve('socket.io'));
    loaded = fromSocketIo('socket.io-adapter') as AdapterModule;
    return loaded;
  } catch {
    throw new InvalidRoomOption('socket.io', 'is not installed: the Molo adapter needs socket.io 4.8 (npm install socket.io)');
  }
}

function integer(option: string, value: number | undefined, fallback: number, max: number): number {
  const resolved = value ?? fallback;
  if (!Number.isInteger(resolved) || resolved < 1 || resolved > max) throw new InvalidRoomOption(`socketio.${option}`, `must be an integer in 1..${max}`);
  return resolved;
}

/** The adapter class for `io.adapter(...)`: every namespace's broadcasts on `bus`, recoverable by sequence. */
export function createMoloAdapter(bus: Bus, options: MoloAdapterOptions = {}): AdapterClass {
  const unknown = unknownOptionKey(options, KNOWN);
  if (unknown !== undefined) throw new InvalidRoomOption(`socketio.${unknown.key}`, unknown.detail);
  const prefix = options.prefix ?? 'sio';
  if (!/^[A-Za-z0-9_][A-Za-z0-9_-]{0,31}$/.test(prefix)) throw new InvalidRoomOption('socketio.prefix', 'must be 1-32 letters, digits, _ or -');
  const maxRecovered = integer('maxRecoveredPackets', options.maxRecoveredPackets, 10_000, 100_000);
  const maxSessions = integer('maxSessions', options.maxSessions, 100_000, 1_000_000);
  const sessionWaitMs = integer('sessionWaitMs', options.sessionWaitMs, 1_000, 10_000);
  const heartbeat = { heartbeatInterval: options.heartbeatInterval, heartbeatTimeout: options.heartbeatTimeout };
  const { ClusterAdapterWithHeartbeat: Base, Adapter } = adapterModule();
  // The in-memory adapter's broadcast: to this server's sockets only.
  const localBroadcast = Adapter.prototype.broadcast;

  class MoloAdapter extends Base {
    readonly #data: string;
    readonly #control: string;
    readonly #subs: BusSubscription[] = [];
    /** Sessions of sockets gone with a recoverable reason, from any server of the namespace, oldest first. */
    readonly #sessions = new Map<string, { session: Persisted; at: number }>();
    readonly #maxDisconnection: number;
    /** Recoveries waiting for a session still on its way from the server the socket left. */
    readonly #waiting = new Map<string, (() => void)[]>();
    #closed = false;

    constructor(nsp: { name: string; server: { opts: { connectionStateRecovery?: { maxDisconnectionDuration?: number } } } }) {
      super(nsp, Object.fromEntries(Object.entries(heartbeat).filter(([, v]) => v !== undefined)));
      // Hashed: a namespace name may hold any character and be long; topics take neither.
      const id = createHash('sha256').update(nsp.name).digest('hex').slice(0, 32);
      this.#data = `${prefix}.${id}`;
      this.#control = `${prefix}.${id}.c`;
      this.#maxDisconnection = nsp.server.opts.connectionStateRecovery?.maxDisconnectionDuration ?? 120_000;
    }

    /** Tails both topics from their heads, then says hello: nothing sent to this server after its hello is missed. */
    override async init(): Promise<void> {
      const [data, control] = await Promise.all([bus.lastSeq(this.#data), bus.lastSeq(this.#control)]);
      if (this.#closed) return;
      this.#subs.push(bus.subscribe(this.#data, data + 1, (item) => this.#item(item)));
      this.#subs.push(bus.subscribe(this.#control, control + 1, (item) => this.#item(item)));
      super.init();
    }

    override close(): void {
      this.#closed = true;
      for (const sub of this.#subs.splice(0)) sub.unsubscribe();
      super.close();
    }

    /**
     * Published only: this server's sockets get it from the bus too, in sequence order with the
     * other servers' broadcasts, so the offsets a client sees only grow and its recovery point is
     * exact (delivering locally first, as Socket.IO's cluster adapters do, can hand a client seq 2
     * before seq 1 and make its recovery resend 2).
     */
    override async broadcast(packet: WirePacket, opts: BroadcastOptions): Promise<void> {
      if (opts.flags?.local === true) return localBroadcast.call(this, packet, opts);
      const wire = { rooms: [...opts.rooms], except: [...(opts.except ?? [])], flags: opts.flags ?? {} };
      try {
        await bus.publish(this.#data, encode({ k: 'm', m: { uid: this.uid, nsp: this.nsp.name, type: 3, data: { packet, opts: wire } } as ClusterMessage }));
      } catch (error) {
        // Socket.IO does not await a broadcast: a refusal (bus closed, home down) would be an unhandled rejection.
        options.logger?.warn({ event: 'rooms.socketio_broadcast_failed', nsp: this.nsp.name, err: error }, 'socket.io broadcast not published');
      }
    }

    protected override async doPublish(message: ClusterMessage): Promise<Offset> {
      if (message.type === 3) return String(await bus.publish(this.#data, encode({ k: 'm', m: message })));
      await bus.publish(this.#control, encode({ k: 'm', m: message }));
      return '';
    }

    protected override async doPublishResponse(requesterUid: string, response: ClusterResponse): Promise<void> {
      await bus.publish(this.#control, encode({ k: 'r', to: requesterUid, m: response }));
    }

    override persistSession(session: Persisted): void {
      this.#keep(session, Date.now());
      void bus.publish(this.#control, encode({ k: 's', uid: this.uid, s: session })).catch(() => undefined);
    }

    override async restoreSession(pid: PrivateSessionId, offset: string): Promise<Session> {
      // A client can come back through another server faster than its session's message gets there: wait a little.
      if (!this.#sessions.has(pid)) await this.#arrival(pid);
      const kept = this.#sessions.get(pid);
      if (kept === undefined || kept.at + this.#maxDisconnection < Date.now()) return NONE;
      const from = Number(offset);
      if (!Number.isSafeInteger(from) || from < 1) return NONE;
      const missed: unknown[][] = [];
      for (let seq = from + 1; ; ) {
        const read = await bus.read(this.#data, seq, 1_000);
        // Past retention (or an offset beyond the head): not recoverable, rather than a silent hole.
        if (read.gap !== undefined || from > read.lastSeq) return NONE;
        for (const message of read.messages) {
          const envelope = decode(message.payload);
          if (envelope?.k === 'm' && envelope.m.type === 3 && envelope.m.nsp === this.nsp.name) {
            const { packet, opts } = envelope.m.data as Broadcast;
            if (recoverable(packet, opts) && reaches(kept.session.rooms, opts)) {
              missed.push([...packet.data, String(message.seq)]);
              if (missed.length > maxRecovered) return NONE;
            }
          }
          seq = message.seq + 1;
        }
        if (read.messages.length === 0 || seq > read.lastSeq) break;
      }
      this.#sessions.delete(pid);
      void bus.publish(this.#control, encode({ k: 'd', uid: this.uid, pid })).catch(() => undefined);
      return { ...kept.session, missedPackets: missed };
    }

    /** One of this server's broadcasts, back from the bus: to the local sockets, with its offset when recoverable. */
    #own({ packet, opts }: Broadcast, seq: number): void {
      if (this.nsp.server.opts.connectionStateRecovery !== undefined && recoverable(packet, opts)) packet.data.push(String(seq));
      localBroadcast.call(this, packet, { rooms: new Set(opts.rooms), except: new Set(opts.except), flags: opts.flags });
    }

    #arrival(pid: string): Promise<void> {
      if (this.#waiting.size >= 10_000 || typeof pid !== 'string') return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          const list = this.#waiting.get(pid)?.filter((w) => w !== done) ?? [];
          if (list.length === 0) this.#waiting.delete(pid);
          else this.#waiting.set(pid, list);
          resolve();
        }, sessionWaitMs);
        this.#waiting.set(pid, [...(this.#waiting.get(pid) ?? []), done]);
      });
    }

    #keep(session: Persisted, at: number): void {
      this.#sessions.delete(session.pid);
      this.#sessions.set(session.pid, { session, at });
      for (const done of this.#waiting.get(session.pid) ?? []) done();
      this.#waiting.delete(session.pid);
      // Oldest first: the bound and the expiry both take from the front.
      for (const [pid, entry] of this.#sessions) {
        if (this.#sessions.size <= maxSessions && entry.at + this.#maxDisconnection >= at) break;
        this.#sessions.delete(pid);
      }
    }

    #item(item: BusItem): void {
      if (item.kind !== 'message' || this.#closed) return;
      const envelope = decode(item.payload);
      if (envelope === undefined) return;
      if (envelope.k === 'm') {
        const m = envelope.m;
        if (m?.nsp !== this.nsp.name) return;
        if (m.uid === this.uid && m.type === 3 && m.data.requestId === undefined) this.#own(m.data as Broadcast, item.seq);
        else this.onMessage(m, m.type === 3 ? String(item.seq) : undefined);
      } else if (envelope.k === 'r') {
        if (envelope.to === this.uid) this.onResponse(envelope.m);
      } else if (envelope.uid !== this.uid) {
        if (envelope.k === 's' && typeof envelope.s?.pid === 'string') this.#keep(envelope.s, Date.now());
        else if (envelope.k === 'd') this.#sessions.delete(envelope.pid);
      }
    }
  }
  return MoloAdapter as unknown as AdapterClass;
}

/** Socket.IO's rule for what is kept for recovery: events, without an acknowledgement (it cannot follow a client), not volatile. */
function recoverable(packet: WirePacket, opts: Broadcast['opts']): boolean {
  return packet.type === EVENT && packet.id === undefined && opts.flags?.volatile === undefined;
}

/** Socket.IO's rule: a broadcast reaches a session in one of its rooms (or everyone) and in none of the excepted. */
function reaches(rooms: readonly string[], opts: { rooms: readonly string[]; except: readonly string[] }): boolean {
  const included = opts.rooms.length === 0 || rooms.some((room) => opts.rooms.includes(room));
  return included && rooms.every((room) => !opts.except.includes(room));
}
