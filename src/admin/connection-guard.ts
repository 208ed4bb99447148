/**
 * Keeps an admin HTTP server answerable while someone holds its sockets open.
 *
 * Node's own defences do not: `maxConnections` drops every *new* connection once the cap is
 * reached (64 idle sockets took `/health` down with the rest), and `headersTimeout` is checked only
 * every `connectionsCheckingInterval` (30 s). So, per connection:
 * - a header deadline: a socket without a complete request head within `headerTimeoutMs` of
 *   connecting (or of its last answer, for keep-alive) is destroyed, by its own timer;
 * - an idle budget: at the connection cap, a new connection evicts the oldest socket that has no
 *   request in progress, so idle and half-sent sockets cannot crowd out a probe. Only when every
 *   socket is busy answering is the newcomer refused.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionGuardOptions {
  readonly maxConnections: number;
  readonly headerTimeoutMs: number;
}

interface Tracked {
  readonly socket: Socket;
  /** Requests received on this socket and not yet answered. */
  active: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export interface ConnectionGuard {
  /** Sockets open now. */
  readonly open: number;
  /** Sockets closed for exceeding the header deadline, and evicted to admit a newer one. */
  readonly stats: { readonly headerTimeouts: number; readonly evictions: number; readonly refused: number };
}

/** Installs the guard on `server`; call before `listen`. */
export function guardConnections(server: Server, options: ConnectionGuardOptions): ConnectionGuard {
  // Insertion order is connection order; re-inserted when a socket becomes idle again, so the
  // first idle entry is the one idle longest.
  const sockets = new Map<Socket, Tracked>();
  const stats = { headerTimeouts: 0, evictions: 0, refused: 0 };

  const arm = (entry: Tracked): void => {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      if (entry.active > 0) return;
      stats.headerTimeouts++;
      entry.socket.destroy();
    }, options.headerTimeoutMs);
    entry.timer.unref();
  };

  const evictOldestIdle = (): boolean => {
    for (const entry of sockets.values()) {
      if (entry.active > 0) continue;
      stats.evictions++;
      forget(entry.socket);
      entry.socket.destroy();
      return true;
    }
    return false;
  };

  const forget = (socket: Socket): void => {
    const entry = sockets.get(socket);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    sockets.delete(socket);
  };

  server.on('connection', (socket: Socket) => {
    if (sockets.size >= options.maxConnections && !evictOldestIdle()) {
      stats.refused++;
      socket.destroy();
      return;
    }
    const entry: Tracked = { socket, active: 0, timer: undefined };
    sockets.set(socket, entry);
    arm(entry);
    socket.once('close', () => forget(socket));
  });

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const entry = sockets.get(request.socket);
    if (entry === undefined) return;
    entry.active++;
    clearTimeout(entry.timer);
    response.once('close', () => {
      entry.active--;
      if (entry.active > 0 || !sockets.has(entry.socket)) return;
      // Idle again (keep-alive): to the back of the eviction order, with a fresh deadline.
      sockets.delete(entry.socket);
      sockets.set(entry.socket, entry);
      arm(entry);
    });
  });

  server.on('close', () => {
    for (const entry of sockets.values()) clearTimeout(entry.timer);
    sockets.clear();
  });

  return {
    get open() {
      return sockets.size;
    },
    stats,
  };
}
