/**
 * The kernel's route to one connected node: the placement router core (links, monitors and calls
 * that cross a boundary; validated frames; failures rebuilt as typed errors) over a node link.
 * Between nodes a peer speaks for every actor of its node, whatever the creation, and frames may be
 * addressed to any actor of this node (placed actors too: the system routes on). Names, spawning
 * and host lifetime are not carried between nodes: such frames are dropped, except a send by name
 * (`{name, node}`), which is delivered here. A send, send by name or call to an attributed actor
 * (a cluster service) is delivered wrapped in FromPeer with this link's node (peer-attribution.ts).
 */
import type { MoloError } from '../actors/errors.js';
import { RouterCore } from '../actors/placement/router-core.js';
import type { RoutedSystem } from '../actors/placement/router.js';
import type { RefTable } from '../actors/placement/ref-table.js';
import type { SendMode } from '../actors/placement/frame-link.js';
import { FrameKind, type ControlFrame, type Frame } from '../actors/placement/frames.js';
import type { Ref } from '../actors/ref.js';
import { MalformedNodeFrame, NodeDown, UnknownRemoteActor } from './errors.js';
import { FromPeer, type PeerAttribution } from './peer-attribution.js';
import { currentCarrier, RuntimeTracer, withCarrier } from '../telemetry/index.js';
import { NodeSpanName, traceFrame, untraceFrame } from './trace-frames.js';

/** What the router needs of its link. */
export interface PeerChannel {
  /** Queues encoded bytes; false when a user frame does not fit (the caller applies the policy). */
  transmit(bytes: Uint8Array, mode: SendMode): boolean;
  /** A frame was dropped, with the typed error that says why. */
  dropped(error: MoloError): void;
}

export class PeerRouter extends RouterCore {
  #closed = false;
  /** Messages for actors not alive here, dropped. */
  unknownActors = 0;
  readonly #tracer = new RuntimeTracer();

  constructor(
    system: RoutedSystem,
    readonly peer: string,
    /** Creation of the peer's main system: the origin of its calls and monitors. */
    readonly peerCreation: number,
    limitBytes: number,
    readonly channel: PeerChannel,
    refs: RefTable,
    readonly attribution: PeerAttribution,
  ) {
    super(system, limitBytes, refs);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** A frame from the peer (a view, valid during the call). */
  receive(bytes: Uint8Array): void {
    const { framesDropped, framesForged } = this.stats;
    this.receiveFrame(bytes, this.peerCreation);
    if (this.stats.framesDropped !== framesDropped) this.channel.dropped(new MalformedNodeFrame(this.peer, 'malformed or misaddressed'));
    else if (this.stats.framesForged !== framesForged) this.channel.dropped(new MalformedNodeFrame(this.peer, 'it speaks for actors not of its node'));
  }

  /**
   * The link is gone: everything here that reached the peer's node sees `noconnection` (monitors,
   * links), and calls waiting on it fail with NodeDown.
   */
  connectionLost(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.lost(
      this.peerCreation,
      () => true,
      'noconnection',
      (call) => new NodeDown(this.peer, String(call.callee)),
    );
  }

  /** A send, send by name or call leaves with the current span's context beside its message (trace-frames.ts). */
  protected override post(destination: number, frame: Frame): void {
    const carrier = currentCarrier();
    super.post(destination, carrier === undefined ? frame : traceFrame(frame, carrier));
  }

  protected override dispatch(incoming: Frame, from: number): void {
    const [frame, carrier, kind] = untraceFrame(incoming);
    if (kind === undefined) return this.#dispatch(frame, from);
    const span = this.#tracer.startSpan(NodeSpanName.receive, { 'molo.node': this.system.node, 'molo.peer': this.peer, 'molo.frame': kind }, carrier);
    if (span === undefined) {
      // Not recorded here: the context still goes on with whatever this delivery sends onward.
      withCarrier(carrier, () => this.#dispatch(frame, from));
      return;
    }
    try {
      span.run!(() => this.#dispatch(frame, from));
      span.end();
    } catch (error) {
      span.end(error);
      throw error;
    }
  }

  #dispatch(frame: Frame, from: number): void {
    if (frame[0] === FrameKind.Send) {
      const to = frame[1];
      // By value: the peer may name an actor whose ref never crossed this link (rebuilt from its parts).
      if (to._cell === undefined && to.node === this.system.node && to.creation === this.creation && this.system.cellOf(to) === undefined) {
        this.unknownActors++;
        this.channel.dropped(new UnknownRemoteActor(this.peer, String(to)));
        return;
      }
      if (this.attribution.covers(to)) frame = [FrameKind.Send, to, new FromPeer(this.peer, frame[2])];
    } else if (frame[0] === FrameKind.Call && this.attribution.covers(frame[3])) {
      const [kind, origin, id, to, request, timeoutMs] = frame;
      frame = [kind, origin, id, to, new FromPeer(this.peer, request), timeoutMs];
    }
    super.dispatch(frame, from);
  }

  protected transmit(_destination: number, bytes: Uint8Array, mode: SendMode): boolean {
    if (this.#closed) return true;
    this.stats.bytesSent += 4 + bytes.byteLength;
    return this.channel.transmit(bytes, mode);
  }

  protected headerFor(destination: number): number {
    return destination;
  }

  /** Nothing from a peer is trusted without checking whose actors it speaks for. */
  protected override trusts(): boolean {
    return false;
  }

  protected override owns(ref: Ref): boolean {
    return ref.node === this.peer;
  }

  protected override accepts(ref: Ref): boolean {
    return ref.node === this.system.node;
  }

  protected reachable(): boolean {
    return !this.#closed;
  }

  protected control(frame: ControlFrame): void {
    if (frame[0] !== FrameKind.SendName) throw new TypeError('not carried between nodes');
    try {
      const ref = this.system.whereis(frame[1]);
      if (ref !== undefined && this.attribution.covers(ref)) this.system.send(ref, new FromPeer(this.peer, frame[2]));
      else this.system.send(frame[1], frame[2]);
    } catch {
      // An unknown name: dropped, as a send to a dead ref.
      this.stats.messagesDropped++;
      this.unknownActors++;
      this.channel.dropped(new UnknownRemoteActor(this.peer, `name '${frame[1].slice(0, 200)}'`));
    }
  }

  /** `{name, node}`: a send to a name registered on the peer. */
  sendNamed(name: string, message: unknown): void {
    if (this.#closed) return;
    this.post(this.peerCreation, [FrameKind.SendName, name, message]);
  }

  // Names are per node: the kernel asks the placement router about them, never a node's.
  sendName(): boolean {
    return false;
  }

  whereis(): Ref | undefined {
    return undefined;
  }

  registered(): void {}

  unregistered(): void {}

  shutdown(): void {}
}
