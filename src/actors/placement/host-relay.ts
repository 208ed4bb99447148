import { DEFAULT_MAILBOX_CAPACITY } from '../mailbox.js';
import type { Ref } from '../ref.js';
import type { SendMode } from './frame-link.js';
import { FrameKind, type CallFailure, type Frame } from './frames.js';
import type { HostChannel, HostPlacement } from './host-channel.js';
import { RouterCore } from './router-core.js';
import { decodeFrame, frameDestination, HEADER_BYTES, peekFrameKind } from './wire.js';

/** A host the hub started, as the hub keeps it. */
export interface PlacedHost {
  readonly creation: number;
  readonly placement: HostPlacement;
  readonly name: string | undefined;
  readonly channel: HostChannel;
  state: 'running' | 'stopping';
  /** Cut off for breaking the channel's rules: what it still sends is ignored. */
  cut: boolean;
  /** Spawns sent and not yet answered: an idle host with one pending is not stopped. */
  pendingSpawns: number;
  /** Its frame cap (`payloadLimitBytes` of the spawn that started it, or the system's). */
  readonly limitBytes: number;
  /** Set by `terminate`: the detail its actors' exit reason carries. */
  terminated: unknown;
  readonly exited: Promise<void>;
}

/**
 * The hub's frame traffic with its hosts: a frame between two hosts is forwarded by its header,
 * undecoded; one for this system (or, through it, another node) is served here; one for a host that
 * is gone or stopping is answered in its name. The hub (hub.ts) starts and stops the hosts.
 */
export abstract class HostRelay extends RouterCore {
  /** The hosts up or stopping, by creation. */
  protected readonly placed = new Map<number, PlacedHost>();

  protected transmit(destination: number, bytes: Uint8Array, mode: SendMode): boolean {
    const host = this.placed.get(destination);
    // A host gone meanwhile: dropped, as before it could have refused anything.
    if (host === undefined) return true;
    const sent = host.channel.link.send(bytes, mode);
    if (sent) this.stats.bytesSent += 4 + bytes.byteLength;
    return sent;
  }

  /** To a host, a frame's header names the system it comes from. */
  protected headerFor(): number {
    return this.creation;
  }

  protected override limitFor(destination: number): number {
    return this.placed.get(destination)?.limitBytes ?? this.limitBytes;
  }

  protected reachable(creation: number): boolean {
    return this.placed.get(creation)?.state === 'running';
  }

  /** Hosts reach other nodes through this system: frames for their actors are served here. */
  protected override accepts(ref: Ref): boolean {
    return ref.node !== this.system.node || super.accepts(ref);
  }

  /** A host speaks for the actors of its creation on this node: never for another node's that share the number. */
  protected override owns(ref: Ref, from: number): boolean {
    return ref.node === this.system.node && super.owns(ref, from);
  }

  /** A record from `host` (within the cap: its link checked that). */
  protected receiveFrom(host: PlacedHost, bytes: Uint8Array): void {
    this.stats.bytesReceived += 4 + bytes.byteLength;
    if (host.state !== 'running' && host.cut) return;
    if (bytes.byteLength <= HEADER_BYTES) {
      this.stats.framesReceived++;
      this.stats.framesDropped++;
      return;
    }
    const destination = frameDestination(bytes)!;
    if (destination === this.creation) {
      this.receiveFrame(bytes, host.creation);
      return;
    }
    this.stats.framesReceived++;
    const target = this.placed.get(destination);
    // A stopping host has no actors left: answered here, as for a host already gone.
    if (target === undefined || target.state !== 'running') {
      // An actor of another node: this system serves the frame, and routes it on to that node.
      if (this.#forOtherNode(bytes)) this.receiveFrame(bytes, host.creation);
      else this.#bounce(bytes, host.creation);
      return;
    }
    // Forwarded undecoded; the header now names the sender, which the target holds to its own actors.
    bytes[0] = host.creation >>> 24;
    bytes[1] = (host.creation >>> 16) & 0xff;
    bytes[2] = (host.creation >>> 8) & 0xff;
    bytes[3] = host.creation & 0xff;
    const kind = peekFrameKind(bytes);
    const user = kind === FrameKind.Send || kind === FrameKind.Call;
    // Within the sender's cap but over the target's (a host with a larger cap): refused here, since
    // the target's link would take an oversized record as hostile.
    if (bytes.byteLength - HEADER_BYTES > target.limitBytes) {
      if (kind === FrameKind.Call) this.#refuseCall(bytes, host.creation, ['payload_too_large', bytes.byteLength - HEADER_BYTES, target.limitBytes]);
      else if (user) this.stats.messagesDropped++;
      else this.stats.framesDropped++;
      return;
    }
    if (this.transmit(destination, bytes, user ? 'user' : 'forwarded')) {
      this.stats.framesSent++;
      return;
    }
    // Over the target's budget: a send is dropped; a call fails with mailbox_full, as at a full mailbox.
    if (kind === FrameKind.Call) this.#refuseCall(bytes, host.creation);
    else if (user) this.stats.messagesDropped++;
    else this.stats.framesDropped++;
  }

  /** The frame is about an actor of another node (which only the main system's routes reach). */
  #forOtherNode(bytes: Uint8Array): boolean {
    const frame = decodeFrame(bytes);
    if (frame === undefined) return false;
    const kind = frame[0];
    const to =
      kind === FrameKind.Send || kind === FrameKind.Exit || kind === FrameKind.LinkExit
        ? frame[1]
        : kind === FrameKind.Link || kind === FrameKind.Unlink
          ? frame[2]
          : kind === FrameKind.Call || kind === FrameKind.Monitor || kind === FrameKind.Demonitor
            ? frame[3]
            : undefined;
    return to !== undefined && to.node !== this.system.node;
  }

  /** Fails a call that could not be forwarded: with `failure`, or as at a full mailbox. */
  #refuseCall(bytes: Uint8Array, from: number, failure?: CallFailure): void {
    this.stats.messagesDropped++;
    const frame = decodeFrame(bytes);
    if (frame === undefined || frame[0] !== FrameKind.Call || frame[1] !== from) return;
    const [, origin, id, to] = frame;
    const reply: CallFailure = failure ?? ['mailbox_full', this.mailboxes.get(to)?.capacity ?? DEFAULT_MAILBOX_CAPACITY];
    try {
      this.post(origin, [FrameKind.Reply, id, false, reply]);
    } catch {
      this.stats.framesDropped++;
    }
  }

  /** Answers a frame on behalf of a host that is gone: calls, links and monitors see `noproc`. */
  #bounce(bytes: Uint8Array, from: number): void {
    // Answered in the gone host's name: only for what `from` may ask about.
    const frame = this.decodeFrom(bytes, from);
    if (frame === undefined) return;
    switch (frame[0]) {
      case FrameKind.Call:
        this.#answerFor(frame[1], [FrameKind.Reply, frame[2], false, ['noproc'] satisfies CallFailure]);
        return;
      case FrameKind.Link:
        this.#answerFor(frame[1].creation, [FrameKind.LinkExit, frame[1], frame[2], 'noproc']);
        return;
      case FrameKind.Monitor:
        this.#answerFor(frame[1], [FrameKind.Down, frame[2], frame[3], 'noproc']);
        return;
      default:
        return;
    }
  }

  #answerFor(origin: number, frame: Frame): void {
    if (origin === this.creation) {
      // Never re-entered from the kernel's stack: answered as if it had arrived.
      queueMicrotask(() => this.dispatch(frame, origin));
      return;
    }
    if (!this.reachable(origin)) return;
    try {
      this.post(origin, frame);
    } catch {
      this.stats.framesDropped++;
    }
  }
}
