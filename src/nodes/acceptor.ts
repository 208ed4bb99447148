/**
 * The listening side of a node: every accepted socket is counted by the AcceptGate from its TCP
 * accept (TLS or not: a socket that never starts TLS holds a slot like any other), then runs the
 * accepting handshake. Refusals go back to the node, which counts and logs them.
 */
import type { Server, Socket } from 'node:net';
import { AcceptGate, type GateClosure, type PendingSocket } from './accept-gate.js';
import { HandshakeRefused } from './errors.js';
import type { ResolvedNodeOptions } from './options.js';

export interface AcceptorHost {
  stopped(): boolean;
  /** Counts (and logs) a refusal. */
  refused(error: HandshakeRefused): void;
  /** Runs the accepting handshake on `socket`; `helloReceived` is for the handshake to call. */
  handshake(socket: Socket, entry: PendingSocket, helloReceived: () => void): void;
}

type AcceptorOptions = Pick<ResolvedNodeOptions, 'maxPendingHandshakes' | 'maxPendingHandshakesPerAddress' | 'helloDeadlineMs' | 'handshakeTimeoutMs' | 'tls'>;

export class Acceptor {
  readonly #gate: AcceptGate;

  constructor(
    server: Server,
    readonly options: AcceptorOptions,
    readonly host: AcceptorHost,
  ) {
    this.#gate = new AcceptGate(
      {
        maxPending: options.maxPendingHandshakes,
        maxPendingPerAddress: options.maxPendingHandshakesPerAddress,
        helloDeadlineMs: options.helloDeadlineMs,
        handshakeTimeoutMs: options.handshakeTimeoutMs,
        tls: options.tls !== undefined,
      },
      // Counted here, once: the handshake running on it, if any, then fails without counting.
      (_entry, why) => host.refused(this.#refusal(why)),
    );
    server.on('connection', (socket: Socket) => this.#accepted(socket));
    if (options.tls) server.on('secureConnection', (socket: Socket) => this.#secured(socket));
    server.on('tlsClientError', (_error: Error, socket: Socket) => {
      // A socket the gate closed before TLS (evicted, past its deadline) is counted there already.
      if (!this.#gate.closedBeforeTls(socket)) host.refused(new HandshakeRefused('tls', undefined, 'TLS handshake failed'));
      socket.destroy();
    });
  }

  /** The gate's reason, if it closed this socket (its handshake then reports that instead of its own failure). */
  closedBy(entry: PendingSocket): HandshakeRefused | undefined {
    return entry.closedBy === undefined ? undefined : this.#refusal(entry.closedBy);
  }

  /** The handshake on this socket ended: its slot is free. */
  release(entry: PendingSocket): void {
    this.#gate.release(entry);
  }

  /** Closes every socket still counted (the node stops). */
  close(): void {
    this.#gate.close();
  }

  #accepted(raw: Socket): void {
    if (this.host.stopped()) {
      this.host.refused(new HandshakeRefused('busy', undefined, 'the node is stopping'));
      raw.destroy();
      return;
    }
    const entry = this.#gate.admit(raw);
    if (entry === undefined) {
      const { maxPendingHandshakes, maxPendingHandshakesPerAddress } = this.options;
      this.host.refused(new HandshakeRefused('busy', undefined, `every pending handshake is past its hello (maxPendingHandshakes ${maxPendingHandshakes}, maxPendingHandshakesPerAddress ${maxPendingHandshakesPerAddress})`));
      return;
    }
    if (entry.socket !== undefined) this.#start(entry, entry.socket);
  }

  /** TLS is up on an accepted socket: its handshake starts, if the gate still counts it. */
  #secured(socket: Socket): void {
    const entry = this.#gate.secured(socket);
    if (entry === undefined || this.host.stopped()) {
      socket.destroy();
      return;
    }
    this.#start(entry, socket);
  }

  #start(entry: PendingSocket, socket: Socket): void {
    this.host.handshake(socket, entry, () => this.#gate.helloReceived(entry));
  }

  #refusal(why: GateClosure): HandshakeRefused {
    if (why === 'evicted') return new HandshakeRefused('evicted', undefined, 'no hello yet, and a newer connection needed the slot (maxPendingHandshakes, maxPendingHandshakesPerAddress)');
    return new HandshakeRefused('timeout', undefined, `no hello within ${this.options.helloDeadlineMs} ms (helloDeadlineMs) or not finished within ${this.options.handshakeTimeoutMs} ms (handshakeTimeoutMs)`);
  }
}
