/**
 * The rooms of one instance: its sockets, the rooms they are in, and for each room a bridge (a
 * supervised actor, room-bridge.ts) tailing the room's topic on the bus. A broadcast is published
 * once to the bus; every instance's bridge hands it to its local members, each of which keeps the
 * last sequence it was sent, so a frame is sent at most once per socket and in order. A join with
 * `since` (a reconnect, to this instance or another) reads what was missed from the bus first,
 * with a typed gap for what is past retention.
 */
import type { Bus, BusItem, BusMessage } from '../bus/index.js';
import { Connection, type ConnectionCounters, type Transport } from './connection.js';
import { RoomBadFrame, RoomBadSeq, RoomCapReached, RoomForbidden } from './errors.js';
import type { ResolvedRooms } from './options.js';
import type { PresenceEntry } from './presence.js';

const ROOM = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

/** What a room's topic carries: a broadcast (`m`, with the socket it skips) or a presence join/leave. */
export type RoomPayload =
  | { readonly k: 'm'; readonly d: unknown; readonly x?: string }
  | { readonly k: 'j' | 'l'; readonly s: string; readonly u: unknown };

interface RoomEntry {
  readonly members: Set<Connection>;
  /** Resolves once the bridge tails the topic. */
  ready: Promise<void>;
  stop: (() => void) | undefined;
}

/** Starts a bridge for `room` that calls `deliver` with each item from `fromSeq`; answers how to stop it. */
export type BridgeStarter = (room: string, topic: string, deliver: (item: BusItem) => void) => Promise<() => void>;

export interface RoomsCounters extends ConnectionCounters {
  accepted: number;
  refused: number;
  published: number;
  forgedSeq: number;
  forbidden: number;
  capRefusals: number;
  gaps: number;
}

export class RoomsHub {
  readonly conns = new Map<string, Connection>();
  readonly rooms = new Map<string, RoomEntry>();
  readonly counters: RoomsCounters = { accepted: 0, refused: 0, published: 0, sent: 0, dropped: 0, closedSlow: 0, forgedSeq: 0, forbidden: 0, capRefusals: 0, gaps: 0 };
  #next = 0;
  startBridge: BridgeStarter | undefined;
  /** The live bridge of each room entry, by its deliver function (the same across the bridge's restarts). */
  readonly bridges = new Map<(item: BusItem) => void, import('../../actors/index.js').Ref>();

  constructor(readonly config: ResolvedRooms) {}

  get bus(): Bus {
    return this.config.bus;
  }

  topic(room: string): string {
    return this.config.topicPrefix + room;
  }

  get directTopic(): string {
    return `_direct.${this.config.topicPrefix}`;
  }

  atSocketCap(): boolean {
    return this.conns.size >= this.config.maxSockets;
  }

  /** A new socket; `token` (SSE) is sent in its hello, for the frames it POSTs. */
  accept(transport: Transport, user: unknown, token?: string): Connection {
    const id = `${this.config.instance}-${(++this.#next).toString(36)}`;
    const { sendQueueMax, sendQueuePolicy: policy, joinRatePerSecond, messageRatePerSecond } = this.config;
    const conn = new Connection(id, user, transport, { sendQueueMax, policy, joinRatePerSecond, messageRatePerSecond }, this.counters);
    this.conns.set(id, conn);
    this.counters.accepted++;
    conn.send(token === undefined ? { t: 'hello', socket: id } : { t: 'hello', socket: id, token });
    return conn;
  }

  /** A client frame: join, leave or publish. Refusals go back as `error` frames; a flood closes the socket. */
  async frame(conn: Connection, text: string): Promise<void> {
    if (!conn.frames.take()) return conn.close(4029, 'rooms.messageRatePerSecond');
    let frame: { t?: unknown; room?: unknown; since?: unknown; data?: unknown; ref?: unknown };
    try {
      frame = JSON.parse(text) as typeof frame;
      if (frame === null || typeof frame !== 'object') throw new RoomBadFrame('not an object');
    } catch {
      return this.#refuse(conn, new RoomBadFrame('not JSON'), undefined);
    }
    const room = frame.room;
    try {
      if (typeof room !== 'string' || !ROOM.test(room)) throw new RoomBadFrame('room must be 1-64 letters, digits, _ . or -');
      if (frame.t === 'join') {
        const since = frame.since;
        if (since !== undefined && (typeof since !== 'number' || !Number.isSafeInteger(since) || since < 0)) throw new RoomBadFrame('since must be a sequence');
        await this.join(conn, room, since);
      } else if (frame.t === 'leave') await this.leave(conn, room);
      else if (frame.t === 'publish') {
        if (!(await this.config.authorize(conn.user, room, 'publish'))) throw new RoomForbidden(room, 'publish');
        await this.broadcast(room, frame.data, { except: conn.id });
      } else throw new RoomBadFrame('t must be join, leave or publish');
    } catch (error) {
      this.#refuse(conn, error, typeof room === 'string' ? room : undefined);
    }
  }

  #refuse(conn: Connection, error: unknown, room: string | undefined): void {
    const e = error as { code?: string; message?: string; cap?: string };
    if (e.code === 'ROOM_CAP_REACHED') this.counters.capRefusals++;
    if (e.code === 'ROOM_FORBIDDEN') this.counters.forbidden++;
    if (e.code === 'ROOM_BAD_SEQ') this.counters.forgedSeq++;
    if (e.code === undefined) this.config.logger?.warn({ event: 'rooms.frame_failed', err: error }, 'rooms frame failed');
    conn.send({ t: 'error', code: e.code ?? 'ROOM_INTERNAL', cap: e.cap, room, message: e.message ?? String(error) });
  }

  async join(conn: Connection, room: string, since: number | undefined): Promise<void> {
    if (conn.rooms.has(room)) throw new RoomBadFrame(`already in room ${room}`);
    if (conn.rooms.size >= this.config.maxRoomsPerSocket) throw new RoomCapReached('rooms.maxRoomsPerSocket', this.config.maxRoomsPerSocket);
    if (!conn.joins.take()) throw new RoomCapReached('rooms.joinRatePerSecond', this.config.joinRatePerSecond);
    if (!(await this.config.authorize(conn.user, room, 'join'))) throw new RoomForbidden(room, 'join');
    if (conn.closed) return;
    const entry = this.#room(room);
    // Member first (buffering), then the head is read: nothing the bridge hands out after this is missed.
    const membership = { last: 0, catching: [] as { seq: number; text: string | undefined }[] | undefined };
    conn.rooms.set(room, membership);
    entry.members.add(conn);
    try {
      await entry.ready;
      const topic = this.topic(room);
      const lastSeq = await this.bus.lastSeq(topic);
      if (since !== undefined && since > lastSeq) throw new RoomBadSeq(room, since, lastSeq);
      membership.last = since ?? lastSeq;
      conn.send({ t: 'joined', room, seq: membership.last });
      for (let from = membership.last + 1; from <= lastSeq && !conn.closed; ) {
        const read = await this.bus.read(topic, from, 1_000);
        if (read.gap !== undefined) {
          this.counters.gaps++;
          conn.send({ t: 'gap', room, from: read.gap.from, to: read.gap.to, reason: 'retention' });
          membership.last = read.gap.to;
          from = read.gap.to + 1;
        }
        for (const message of read.messages) {
          if (message.seq > lastSeq) break;
          this.#sendMessage(conn, room, message, membership);
          from = message.seq + 1;
        }
        if (read.messages.length === 0 && read.gap === undefined) break;
      }
      const buffered = membership.catching ?? [];
      membership.catching = undefined;
      for (const item of buffered) {
        if (item.seq <= membership.last) continue;
        membership.last = item.seq;
        if (item.text !== undefined) conn.send(JSON.parse(item.text) as object, room, item.seq);
      }
      if (this.config.presence !== undefined) {
        await this.config.presence.join({ room, socket: conn.id, instance: this.config.instance, user: conn.user });
        await this.bus.publish(topic, { k: 'j', s: conn.id, u: conn.user } satisfies RoomPayload);
      }
    } catch (error) {
      this.#drop(conn, room);
      throw error;
    }
  }

  async leave(conn: Connection, room: string): Promise<void> {
    if (!conn.rooms.has(room)) return;
    this.#drop(conn, room);
    conn.send({ t: 'left', room });
    await this.#presenceLeave(room, conn);
  }

  async #presenceLeave(room: string, conn: Connection): Promise<void> {
    const presence = this.config.presence;
    if (presence === undefined) return;
    if (await presence.leave(room, conn.id)) await this.bus.publish(this.topic(room), { k: 'l', s: conn.id, u: conn.user } satisfies RoomPayload);
  }

  /** The socket went away: out of every room (presence leaves published), forgotten. */
  disconnect(conn: Connection): void {
    conn.closed = true;
    this.conns.delete(conn.id);
    for (const room of [...conn.rooms.keys()]) {
      this.#drop(conn, room);
      this.#presenceLeave(room, conn).catch((error: unknown) => this.config.logger?.warn({ event: 'rooms.presence_leave_failed', room, err: error }, 'presence leave failed'));
    }
  }

  #drop(conn: Connection, room: string): void {
    conn.rooms.delete(room);
    const entry = this.rooms.get(room);
    if (entry === undefined) return;
    entry.members.delete(conn);
    if (entry.members.size === 0) {
      this.rooms.delete(room);
      void entry.ready.then(() => entry.stop?.()).catch(() => undefined);
    }
  }

  #room(room: string): RoomEntry {
    let entry = this.rooms.get(room);
    if (entry !== undefined) return entry;
    // Each room with a bridge tails a topic, as does the direct-message bridge: the bus's topics are streams, capped.
    if (this.rooms.size + 1 >= this.config.maxTopics) throw new RoomCapReached('rooms.maxTopics', this.config.maxTopics);
    const made: RoomEntry = { members: new Set(), ready: Promise.resolve(), stop: undefined };
    made.ready = (async () => {
      if (this.startBridge === undefined) throw new Error('rooms are not started');
      made.stop = await this.startBridge(room, this.topic(room), (item) => this.deliver(room, item));
      // Emptied while the bridge started: stop it at once.
      if (this.rooms.get(room) !== made) made.stop();
    })();
    made.ready.catch(() => this.rooms.get(room) === made && this.rooms.delete(room));
    this.rooms.set(room, made);
    return made;
  }

  /** Where a restarted bridge of `room` resumes: one past the lowest position of a live member; undefined when none has one yet. */
  resumeSeq(room: string): number | undefined {
    let low: number | undefined;
    for (const conn of this.rooms.get(room)?.members ?? []) {
      const membership = conn.rooms.get(room);
      if (membership === undefined || membership.catching !== undefined) continue;
      low = low === undefined ? membership.last : Math.min(low, membership.last);
    }
    return low === undefined ? undefined : low + 1;
  }

  /** An item the room's bridge read from the bus: to each local member, at most once, in order. */
  deliver(room: string, item: BusItem): void {
    const entry = this.rooms.get(room);
    if (entry === undefined) return;
    for (const conn of entry.members) {
      const membership = conn.rooms.get(room);
      if (membership === undefined || (item.kind === 'gap' ? item.to : item.seq) <= membership.last) continue;
      if (item.kind === 'gap') {
        const from = Math.max(item.from, membership.last + 1);
        if (membership.catching !== undefined) continue; // the catch-up read reports it
        this.counters.gaps++;
        membership.last = item.to;
        conn.send({ t: 'gap', room, from, to: item.to, reason: 'retention' });
        continue;
      }
      if (membership.catching !== undefined) {
        const frame = frameOf(conn, room, item);
        membership.catching.push({ seq: item.seq, text: frame === undefined ? undefined : JSON.stringify(frame) });
        continue;
      }
      this.#sendMessage(conn, room, item, membership);
    }
  }

  #sendMessage(conn: Connection, room: string, message: BusMessage, membership: { last: number }): void {
    membership.last = message.seq;
    const frame = frameOf(conn, room, message);
    if (frame !== undefined) conn.send(frame, room, message.seq);
  }

  /** Publishes once to the bus; every instance's members of the room get it (but `except`). */
  async broadcast(room: string, data: unknown, options: { readonly except?: string } = {}): Promise<number> {
    if (!ROOM.test(room)) throw new RoomBadFrame('room must be 1-64 letters, digits, _ . or -');
    const payload: RoomPayload = options.except === undefined ? { k: 'm', d: data } : { k: 'm', d: data, x: options.except };
    const seq = await this.bus.publish(this.topic(room), payload);
    this.counters.published++;
    return seq;
  }

  /** To one socket, wherever it is connected (through the bus's direct topic). */
  async sendTo(socket: string, data: unknown): Promise<void> {
    await this.bus.publish(this.directTopic, { to: socket, d: data });
  }

  directItem(item: BusItem): void {
    if (item.kind !== 'message') return;
    const { to, d } = item.payload as { to?: unknown; d?: unknown };
    if (typeof to === 'string') this.conns.get(to)?.send({ t: 'direct', data: d });
  }

  /** Entries a sweep removed (their instance stopped renewing them): their leaves go out as events. */
  async swept(entries: readonly PresenceEntry[]): Promise<void> {
    for (const entry of entries) await this.bus.publish(this.topic(entry.room), { k: 'l', s: entry.socket, u: entry.user } satisfies RoomPayload);
  }
}

function frameOf(conn: Connection, room: string, message: BusMessage): object | undefined {
  const payload = message.payload as RoomPayload;
  if (payload.k === 'm') return payload.x === conn.id ? undefined : { t: 'msg', room, seq: message.seq, data: payload.d };
  return { t: 'presence', room, seq: message.seq, event: payload.k === 'j' ? 'join' : 'leave', socket: payload.s, user: payload.u };
}
