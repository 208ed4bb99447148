/**
 * The socket server of one instance, a supervised actor: an HTTP server taking WebSocket upgrades
 * (the `ws` package) and Server-Sent Events (`GET /rooms/events?rooms=a,b`, positions carried in
 * the event id, so a reconnecting EventSource resumes by its Last-Event-ID), and `/health`. The
 * authentication hook runs before a socket is accepted; the socket cap answers 503 naming it.
 * It also renews this instance's presence rows and sweeps expired ones.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { WebSocketServer, type WebSocket } from 'ws';
import { GenServer } from '../../behaviours/index.js';
import type { Connection, Transport } from './connection.js';
import type { RoomsHub } from './hub.js';

export interface RoomsStatus {
  readonly instance: string;
  readonly port: number;
  readonly sockets: number;
  readonly rooms: number;
  /** Frames queued for slow sockets, summed. */
  readonly queued: number;
  readonly counters: Readonly<Record<string, number>>;
}

/** Rooms and slow sockets `detail` lists at most (the largest and the slowest first). */
export const ROOMS_DETAIL_LIMITS = { rooms: 100, sockets: 20 } as const;

/** What the admin tree shows of an instance (`sections.rooms`): its status, its largest rooms and its slowest sockets. */
export interface RoomsDetail extends RoomsStatus {
  /** Rooms with local members, by member count, at most `ROOMS_DETAIL_LIMITS.rooms`. */
  readonly roomList: readonly { readonly room: string; readonly sockets: number }[];
  /** Sockets with frames queued, the most queued first, at most `ROOMS_DETAIL_LIMITS.sockets`. */
  readonly slowSockets: readonly { readonly socket: string; readonly rooms: number; readonly queued: number }[];
  /** One socket's send queue cap (`sendQueueMax`). */
  readonly sendQueueMax: number;
}

export class RoomSocketServer extends GenServer<'status' | 'detail', RoomsStatus | RoomsDetail> {
  #http: Server | undefined;
  #wss: WebSocketServer | undefined;
  #timers: NodeJS.Timeout[] = [];
  /** Each SSE socket's token, sent in its hello: a POSTed frame must carry it, as well as the socket's session. */
  readonly #sseTokens = new Map<string, Buffer>();

  constructor(
    private readonly hub: RoomsHub,
    private readonly onPort: (port: number) => void,
  ) {
    super();
  }

  override async init(): Promise<void> {
    const config = this.hub.config;
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: config.maxMessageBytes });
    const http = createServer((req, res) => void this.#request(req, res));
    http.on('upgrade', (req: IncomingMessage, socket, head) => void this.#upgrade(req, socket as import('node:net').Socket, head));
    this.#http = http;
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(config.port, config.host, () => resolve());
    });
    this.onPort((http.address() as AddressInfo).port);
    const presence = config.presence;
    if (presence !== undefined) {
      const warn = (what: string) => (error: unknown) => config.logger?.warn({ event: `rooms.presence_${what}_failed`, err: error }, `presence ${what} failed`);
      this.#timers.push(setInterval(() => presence.heartbeat(config.instance).catch(warn('heartbeat')), Math.max(250, Math.floor(presence.ttlMs / 3))));
      this.#timers.push(setInterval(() => presence.sweep().then((gone) => this.hub.swept(gone)).catch(warn('sweep')), presence.ttlMs));
      for (const timer of this.#timers) timer.unref();
    }
  }

  override handleCall(request: 'status' | 'detail'): RoomsStatus | RoomsDetail {
    let queued = 0;
    for (const conn of this.hub.conns.values()) queued += conn.queued;
    const status = { instance: this.hub.config.instance, port: (this.#http?.address() as AddressInfo | null)?.port ?? 0, sockets: this.hub.conns.size, rooms: this.hub.rooms.size, queued, counters: { ...this.hub.counters } };
    if (request !== 'detail') return status;
    const roomList = [...this.hub.rooms].map(([room, entry]) => ({ room, sockets: entry.members.size })).sort((a, b) => b.sockets - a.sockets || (a.room < b.room ? -1 : 1));
    const slowSockets = [...this.hub.conns.values()].filter((conn) => conn.queued > 0).map((conn) => ({ socket: conn.id, rooms: conn.rooms.size, queued: conn.queued }));
    slowSockets.sort((a, b) => b.queued - a.queued);
    return { ...status, roomList: roomList.slice(0, ROOMS_DETAIL_LIMITS.rooms), slowSockets: slowSockets.slice(0, ROOMS_DETAIL_LIMITS.sockets), sendQueueMax: this.hub.config.sendQueueMax };
  }

  override async terminate(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    for (const conn of [...this.hub.conns.values()]) {
      conn.close(1001, 'shutting down');
      this.hub.disconnect(conn);
    }
    for (const client of this.#wss?.clients ?? []) client.terminate();
    this.#wss?.close();
    this.#http?.closeAllConnections();
    await new Promise<void>((resolve) => (this.#http === undefined ? resolve() : this.#http.close(() => resolve())));
  }

  async #authenticate(req: IncomingMessage): Promise<{ user: unknown } | undefined> {
    try {
      const user = await this.hub.config.authenticate(req);
      return user === undefined || user === null || user === false ? undefined : { user };
    } catch (error) {
      this.hub.config.logger?.warn({ event: 'rooms.authenticate_failed', err: error }, 'rooms authentication hook threw');
      return undefined;
    }
  }

  async #upgrade(req: IncomingMessage, socket: import('node:net').Socket, head: Buffer): Promise<void> {
    const refuse = (status: string, cap?: string): void => {
      this.hub.counters.refused++;
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n${cap === undefined ? '' : `X-Molo-Cap: ${cap}\r\n`}Content-Length: 0\r\n\r\n`);
    };
    if (this.hub.atSocketCap()) return refuse('503 Service Unavailable', 'rooms.maxSockets');
    const auth = await this.#authenticate(req);
    if (auth === undefined) return refuse('401 Unauthorized');
    if (this.hub.atSocketCap()) return refuse('503 Service Unavailable', 'rooms.maxSockets');
    this.#wss!.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const transport: Transport = {
        kind: 'ws',
        write: (text, done) => ws.send(text, () => done()),
        close: (code, reason) => ws.close(code, reason),
      };
      // ws closes an oversized frame with a bare 1009 itself; the reason names the cap, as the other closes do.
      const close = ws.close.bind(ws);
      ws.close = (code?: number, reason?: string | Buffer) => close(code, code === 1009 && reason === undefined ? 'rooms.maxMessageBytes' : reason);
      const conn = this.hub.accept(transport, auth.user);
      ws.on('message', (data, isBinary) => {
        if (isBinary) return conn.close(1003, 'text frames only');
        void this.hub.frame(conn, data.toString());
      });
      ws.on('error', () => undefined);
      ws.on('close', () => this.hub.disconnect(conn));
    });
  }

  async #request(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, instance: this.hub.config.instance, sockets: this.hub.conns.size }));
      return;
    }
    if (url.pathname === '/rooms/events/frame' && req.method === 'POST') return this.#postedFrame(req, res);
    if (url.pathname !== '/rooms/events' || req.method !== 'GET') {
      const handler = this.hub.config.httpHandler;
      if (handler !== undefined && (await handler(req, res))) return;
      res.writeHead(404).end();
      return;
    }
    if (this.hub.atSocketCap()) {
      this.hub.counters.refused++;
      res.writeHead(503, { 'x-molo-cap': 'rooms.maxSockets' }).end();
      return;
    }
    const auth = await this.#authenticate(req);
    if (auth === undefined) {
      this.hub.counters.refused++;
      res.writeHead(401).end();
      return;
    }
    const positions = parsePositions(String(req.headers['last-event-id'] ?? url.searchParams.get('since') ?? ''));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write(':ok\n\n');
    const sent = new Map(positions);
    const transport: Transport = {
      kind: 'sse',
      write: (text, done) => {
        const frame = JSON.parse(text) as { room?: string; seq?: number; to?: number; t?: string };
        if (frame.room !== undefined) {
          const seq = frame.t === 'gap' ? frame.to : frame.t === 'joined' ? frame.seq : frame.seq;
          if (typeof seq === 'number') sent.set(frame.room, seq);
        }
        res.write(`id: ${[...sent].map(([room, seq]) => `${room}:${seq}`).join(',')}\ndata: ${text}\n\n`, () => done());
      },
      close: () => res.end(),
    };
    const token = randomBytes(32);
    const conn: Connection = this.hub.accept(transport, auth.user, token.toString('base64url'));
    this.#sseTokens.set(conn.id, token);
    req.on('close', () => {
      this.#sseTokens.delete(conn.id);
      this.hub.disconnect(conn);
    });
    for (const room of (url.searchParams.get('rooms') ?? '').split(',').filter(Boolean)) {
      await this.hub.frame(conn, JSON.stringify({ t: 'join', room, since: positions.get(room) }));
    }
  }

  /**
   * `POST /rooms/events/frame` with `{ socket, token, t, room, since?, data? }`: a frame of an SSE
   * socket (join, leave, publish) after it connected. It must come from the socket's session (the
   * authentication hook answers the same user) and carry the token of the socket's hello; it then
   * goes through the same checks, caps and rate limits as a WebSocket frame, its answer on the stream.
   */
  async #postedFrame(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = (status: number, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { connection: 'close', ...headers }).end();
    };
    const auth = await this.#authenticate(req);
    if (auth === undefined) return answer(401);
    const max = this.hub.config.maxMessageBytes;
    const body = await readBody(req, max + 1_024);
    if (body === undefined || Buffer.byteLength(body) > max + 1_024) return answer(413, { 'x-molo-cap': 'rooms.maxMessageBytes' });
    let frame: { socket?: unknown; token?: unknown; [key: string]: unknown };
    try {
      frame = JSON.parse(body) as typeof frame;
      if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) throw new TypeError('not an object');
    } catch {
      return answer(400);
    }
    const { socket, token, ...rest } = frame;
    const expected = typeof socket === 'string' ? this.#sseTokens.get(socket) : undefined;
    const given = typeof token === 'string' ? Buffer.from(token, 'base64url') : undefined;
    const conn = typeof socket === 'string' ? this.hub.conns.get(socket) : undefined;
    if (expected === undefined || given === undefined || given.length !== expected.length || !timingSafeEqual(given, expected) || conn === undefined) return answer(403);
    if (!isDeepStrictEqual(auth.user, conn.user)) return answer(403);
    const text = JSON.stringify(rest);
    // The cap is on the frame as a WebSocket would carry it, not on the envelope around it.
    if (Buffer.byteLength(text) > max) return answer(413, { 'x-molo-cap': 'rooms.maxMessageBytes' });
    answer(202);
    await this.hub.frame(conn, text);
  }
}

/** Reads a body of at most `max` bytes; undefined past it (the rest is not read). */
function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.removeAllListeners('data');
        req.pause();
        resolve(undefined);
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parsePositions(text: string): Map<string, number> {
  const positions = new Map<string, number>();
  for (const part of text.split(',').slice(0, 10_000)) {
    const at = part.lastIndexOf(':');
    const seq = Number(part.slice(at + 1));
    if (at > 0 && Number.isSafeInteger(seq) && seq >= 0) positions.set(part.slice(0, at), seq);
  }
  return positions;
}
