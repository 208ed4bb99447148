/**
 * Keeps the node port open to legitimate peers while someone holds sockets on it.
 *
 * A socket is counted from the TCP accept (before TLS, if any) until its handshake ends, and:
 * - it must deliver a complete hello within `helloDeadlineMs` and finish within
 *   `handshakeTimeoutMs`, both from the accept, by its own timers;
 * - at `maxPendingPerAddress` sockets from its address, a newcomer evicts that address's oldest
 *   socket that has not sent a complete hello; at `maxPending` in all, it evicts the oldest such
 *   socket of the address holding the most of them, so one address flooding cannot push out a lone
 *   peer from another;
 * - only when every counted socket is past its hello is the newcomer refused.
 * Evicted and refused peers are told `busy` in a handshake frame where the socket can carry one
 * (plain TCP, or TLS already up), then closed after a short linger so the frame is read, not reset.
 * The pattern is the admin surface's connection guard (oldest idle evicted), for a handshake.
 */
import type { Socket } from 'node:net';
import { writeRefusal } from './handshake.js';

export interface AcceptGateOptions {
  readonly maxPending: number;
  readonly maxPendingPerAddress: number;
  readonly helloDeadlineMs: number;
  readonly handshakeTimeoutMs: number;
  /** TLS: frames wait for the TLS handshake. */
  readonly tls: boolean;
}

/** Why the gate closed a counted socket. */
export type GateClosure = 'evicted' | 'timeout';

/** Sent-off sockets lingering at once; past it a refused socket is destroyed without a word. */
const MAX_LINGERING = 256;
/** How long a sent-off socket may take to read its `busy` and close. */
const LINGER_MS = 250;

/** One accepted socket, counted until its handshake ends. */
export class PendingSocket {
  /** The socket the handshake runs on: the accepted one, or the TLS socket over it once TLS is up. */
  socket: Socket | undefined;
  helloSeen = false;
  closedBy: GateClosure | undefined;
  readonly #timers: NodeJS.Timeout[] = [];

  constructor(
    readonly raw: Socket,
    readonly address: string,
    /** Remote address and port, taken at accept (a destroyed socket no longer tells them). */
    readonly endpoint: string,
  ) {}

  arm(ms: number, expired: () => void): void {
    const timer = setTimeout(expired, ms);
    timer.unref();
    this.#timers.push(timer);
  }

  disarm(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.length = 0;
  }
}

export class AcceptGate {
  /** Accept order: the first entry without a hello is the oldest idle one. */
  readonly #pending = new Map<Socket, PendingSocket>();
  /** Counted sockets per address, and those not past their hello. */
  readonly #perAddress = new Map<string, { all: number; idle: number }>();
  /** TLS: counted sockets by remote address and port, to find them again at `secureConnection`. */
  readonly #byEndpoint = new Map<string, PendingSocket>();
  /** Accepted sockets the gate closed before TLS was up: their TLS error is not a TLS failure. */
  readonly #closedBeforeTls = new WeakSet<Socket>();
  #lingering = 0;
  evicted = 0;
  refused = 0;

  constructor(
    readonly options: AcceptGateOptions,
    /** A counted socket was closed by the gate (evicted or past a deadline). */
    readonly closed: (entry: PendingSocket, why: GateClosure) => void,
  ) {}

  get size(): number {
    return this.#pending.size;
  }

  /** A socket was accepted: counted (perhaps evicting an idle one), or refused (undefined). */
  admit(raw: Socket): PendingSocket | undefined {
    const address = raw.remoteAddress ?? 'unknown';
    const counts = this.#perAddress.get(address);
    let victim: PendingSocket | undefined;
    let full = false;
    if (counts !== undefined && counts.all >= this.options.maxPendingPerAddress) {
      full = true;
      victim = this.#oldestIdle(address);
    } else if (this.#pending.size >= this.options.maxPending) {
      full = true;
      const crowded = this.#mostIdleAddress();
      if (crowded !== undefined) victim = this.#oldestIdle(crowded);
    }
    if (full && victim === undefined) {
      this.refused++;
      this.#sendOff(raw, !this.options.tls);
      return undefined;
    }
    if (victim !== undefined) this.#close(victim, 'evicted');
    const entry = new PendingSocket(raw, address, endpoint(raw));
    if (!this.options.tls) entry.socket = raw;
    this.#pending.set(raw, entry);
    const next = this.#perAddress.get(address) ?? { all: 0, idle: 0 };
    next.all++;
    next.idle++;
    this.#perAddress.set(address, next);
    if (this.options.tls) this.#byEndpoint.set(entry.endpoint, entry);
    entry.arm(this.options.helloDeadlineMs, () => {
      if (!entry.helloSeen) this.#close(entry, 'timeout');
    });
    entry.arm(this.options.handshakeTimeoutMs, () => this.#close(entry, 'timeout'));
    raw.once('close', () => this.release(entry));
    return entry;
  }

  /** TLS is up on a counted socket: the entry it belongs to (undefined if the gate closed it meanwhile). */
  secured(socket: Socket): PendingSocket | undefined {
    const entry = this.#byEndpoint.get(endpoint(socket));
    if (entry === undefined || !this.#pending.has(entry.raw)) return undefined;
    entry.socket = socket;
    return entry;
  }

  /**
   * Did the gate close this TLS socket's connection before TLS was up? Node gives a TLS server's
   * `tlsClientError` the TLS socket only; the accepted one under it is its `_parent` (internal, so
   * read defensively: without it, such errors count as TLS failures, as before).
   */
  closedBeforeTls(tlsSocket: Socket): boolean {
    const parent = (tlsSocket as Socket & { _parent?: unknown })._parent;
    return typeof parent === 'object' && parent !== null && this.#closedBeforeTls.has(parent as Socket);
  }

  /** A complete hello arrived: the socket is no longer idle (never evicted; its hello deadline is met). */
  helloReceived(entry: PendingSocket): void {
    if (entry.helloSeen || !this.#pending.has(entry.raw)) return;
    entry.helloSeen = true;
    const counts = this.#perAddress.get(entry.address);
    if (counts !== undefined) counts.idle--;
  }

  /** The handshake ended (link up, refused or closed): the slot is free. Idempotent. */
  release(entry: PendingSocket): void {
    if (this.#pending.get(entry.raw) !== entry) return;
    entry.disarm();
    this.#pending.delete(entry.raw);
    if (this.#byEndpoint.get(entry.endpoint) === entry) this.#byEndpoint.delete(entry.endpoint);
    const counts = this.#perAddress.get(entry.address);
    if (counts === undefined) return;
    counts.all--;
    if (!entry.helloSeen) counts.idle--;
    if (counts.all === 0) this.#perAddress.delete(entry.address);
  }

  /** Closes every counted socket (the node stops). */
  close(): void {
    for (const entry of [...this.#pending.values()]) {
      this.release(entry);
      entry.raw.destroy();
    }
  }

  #close(entry: PendingSocket, why: GateClosure): void {
    if (!this.#pending.has(entry.raw)) return;
    entry.closedBy = why;
    this.release(entry);
    if (entry.socket === undefined) this.#closedBeforeTls.add(entry.raw);
    if (why === 'evicted') {
      this.evicted++;
      // The socket may be a slow but real peer: it is told busy, and retries.
      this.#sendOff(entry.socket ?? entry.raw, entry.socket !== undefined);
    } else {
      entry.raw.destroy();
    }
    this.closed(entry, why);
  }

  #oldestIdle(address: string): PendingSocket | undefined {
    if ((this.#perAddress.get(address)?.idle ?? 0) === 0) return undefined;
    for (const entry of this.#pending.values()) if (!entry.helloSeen && entry.address === address) return entry;
    return undefined;
  }

  #mostIdleAddress(): string | undefined {
    let most: string | undefined;
    let count = 0;
    for (const [address, counts] of this.#perAddress) {
      if (counts.idle > count) {
        most = address;
        count = counts.idle;
      }
    }
    return most;
  }

  /** Tells the peer `busy` if the socket can carry a frame, then closes it (after a short linger, within a cap). */
  #sendOff(socket: Socket, canSpeak: boolean): void {
    if (!canSpeak || this.#lingering >= MAX_LINGERING || socket.destroyed) {
      socket.destroy();
      return;
    }
    this.#lingering++;
    socket.on('error', () => {});
    // Read and discard what the peer sent (its hello): unread data would turn the close into a reset.
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      this.#lingering--;
    });
    try {
      writeRefusal(socket, 'busy');
      socket.end();
    } catch {
      socket.destroy();
    }
  }
}

function endpoint(socket: Socket): string {
  return `${socket.remoteAddress ?? ''}|${socket.remotePort ?? ''}`;
}
