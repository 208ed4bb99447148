/**
 * One authenticated link to a peer node: the socket, framed by the placement FrameLink (u32 length
 * records, the cap checked before a byte of a body is buffered, and credit-based flow control, so a
 * side holds at most `sendQueueBytes` unacknowledged), heartbeats, and the PeerRouter that turns
 * frames into kernel operations. One socket carries every message between the two nodes in the
 * order sent, so per-pair order holds.
 *
 * When the queue is full, a user send follows the full policy (`drop-newest` or `disconnect`) and a
 * call fails at once with NodeLinkFull; signals (exits, monitors, replies) wait, up to another
 * `sendQueueBytes`, beyond which the link is closed: signals are never silently lost.
 */
import type { Socket } from 'node:net';
import { clockInterval, type Clock, type ClockInterval } from '../actors/clock.js';
import type { MoloError } from '../actors/errors.js';
import { FrameLink } from '../actors/placement/frame-link.js';
import type { SendMode } from '../actors/placement/frame-link.js';
import { FrameKind } from '../actors/placement/frames.js';
import type { RoutedSystem } from '../actors/placement/router.js';
import type { RefTable } from '../actors/placement/ref-table.js';
import { HEADER_BYTES, peekFrameKind } from '../actors/placement/wire.js';
import { NodeFrameTooLarge, NodeLinkFull, MalformedNodeFrame } from './errors.js';
import type { PeerInfo } from './handshake.js';
import type { FullPolicy } from './options.js';
import type { PeerAttribution } from './peer-attribution.js';
import { PeerRouter } from './peer-router.js';

/** Why a link went down, as `nodedown` reports it. */
export type DownReason = 'closed' | 'heartbeat' | 'frame_too_large' | 'violation' | 'queue_full' | 'disconnect' | 'duplicate' | 'stopped' | 'killed';

export interface LinkSettings {
  readonly maxFrameBytes: number;
  readonly sendQueueBytes: number;
  readonly detectionMs: number;
  readonly fullPolicy: FullPolicy;
}

export interface LinkEvents {
  /** A frame was dropped or the link broke a rule: the typed error says why (logged and counted by the node). */
  dropped(link: NodeLink, error: MoloError): void;
  /** The link is down (once). */
  down(link: NodeLink, reason: DownReason): void;
}

const HEARTBEAT = new Uint8Array(HEADER_BYTES);

export class NodeLink {
  readonly frames: FrameLink;
  readonly router: PeerRouter;
  readonly queueBytes: number;
  /** Wall-clock time the link came up, on the system's clock. */
  readonly upAt: number;
  /** Sends dropped by the full policy, calls refused, links closed by it. */
  fullDrops = 0;
  #down = false;
  readonly #clock: Clock;
  readonly #heartbeat: ClockInterval;
  #lastRead = 0;
  #lastWritten = 0;
  #silentSince: number;

  constructor(
    readonly socket: Socket,
    readonly peer: string,
    readonly info: PeerInfo,
    system: RoutedSystem,
    readonly settings: LinkSettings,
    readonly events: LinkEvents,
    refs: RefTable,
    attribution: PeerAttribution,
  ) {
    // Heartbeats and silence follow the system's clock, so a SimulatedClock alone drives detection in tests.
    this.#clock = system.clock;
    this.upAt = this.#clock.wallNow();
    this.#silentSince = this.#clock.now();
    // Both sides use the smaller queue, so each side's receive check matches the other's send budget.
    this.queueBytes = Math.min(settings.sendQueueBytes, info.sendQueueBytes);
    const maxRecordBytes = HEADER_BYTES + settings.maxFrameBytes;
    this.frames = new FrameLink(
      { maxRecordBytes, budgetBytes: this.queueBytes, maxWaitingBytes: this.queueBytes },
      // Pooled: a small batch costs no allocation of its own (the socket copies it into the kernel).
      { write: (batch) => void socket.write(batch), alloc: (bytes) => Buffer.allocUnsafe(bytes) },
      {
        record: (bytes) => this.#record(bytes),
        violation: (why) => {
          const tooLarge = why.includes('over the cap');
          this.events.dropped(this, tooLarge ? new NodeFrameTooLarge(peer, why) : new MalformedNodeFrame(peer, why));
          this.close(tooLarge ? 'frame_too_large' : 'violation');
        },
      },
    );
    this.router = new PeerRouter(system, peer, info.creation, Math.min(settings.maxFrameBytes, info.maxFrameBytes), {
      transmit: (bytes, mode) => this.#transmit(bytes, mode),
      dropped: (error) => this.events.dropped(this, error),
    }, refs, attribution);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.frames.receive(chunk));
    socket.on('error', () => this.close('closed'));
    socket.on('close', () => this.close('closed'));
    const interval = Math.max(50, Math.floor(settings.detectionMs / 4));
    this.#heartbeat = clockInterval(this.#clock, interval, () => this.#tick());
  }

  get isDown(): boolean {
    return this.#down;
  }

  /** Bytes queued here: unacknowledged by the peer, or waiting for its credit. */
  get queuedBytes(): number {
    return this.frames.inFlightBytes;
  }

  /** Starts reading: bytes the handshake read past its last message come first. */
  start(leftover: Buffer): void {
    if (leftover.length > 0) this.frames.receive(leftover);
  }

  #record(bytes: Uint8Array): void {
    // A heartbeat: a header with no body; any bytes read count as a sign of life.
    if (bytes.byteLength === HEADER_BYTES) return;
    this.router.receive(bytes);
  }

  #tick(): void {
    const now = this.#clock.now();
    const read = this.frames.bytesRead;
    if (read !== this.#lastRead) {
      this.#lastRead = read;
      this.#silentSince = now;
    } else if (now - this.#silentSince >= this.settings.detectionMs) {
      this.close('heartbeat');
      return;
    }
    // Only an idle side sends heartbeats; traffic is proof enough.
    if (this.frames.bytesWritten === this.#lastWritten) this.frames.send(HEARTBEAT, 'forwarded');
    this.#lastWritten = this.frames.bytesWritten;
  }

  #transmit(bytes: Uint8Array, mode: SendMode): boolean {
    if (this.#down) return true;
    if (this.frames.send(bytes, mode === 'signal' ? 'forwarded' : mode)) return true;
    if (mode !== 'user') {
      // Signals past the waiting cap: the peer does not read; the link cannot keep its promises.
      queueMicrotask(() => this.close('queue_full'));
      return true;
    }
    this.fullDrops++;
    // Closed after the caller's stack unwinds: a sender never runs the exit propagation.
    if (this.settings.fullPolicy === 'disconnect') queueMicrotask(() => this.close('queue_full'));
    if (peekFrameKind(bytes) === FrameKind.Call) throw new NodeLinkFull(this.peer, this.queueBytes);
    this.router.stats.messagesDropped++;
    return true;
  }

  /** Closes the link (once): the socket is destroyed and the peer's actors are lost to this node. */
  close(reason: DownReason): void {
    if (this.#down) return;
    this.#down = true;
    this.#heartbeat.cancel();
    this.frames.close();
    if (reason === 'stopped' || reason === 'disconnect') {
      // Orderly: what was written still reaches the peer; a peer that never reads is cut after a second.
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 1_000).unref();
    } else {
      this.socket.destroy();
    }
    this.router.connectionLost();
    this.events.down(this, reason);
  }
}
