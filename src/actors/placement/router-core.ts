import { CalleeExited, MailboxFull, NoProc } from '../errors.js';
import type { ExitReason } from '../exit.js';
import { DEFAULT_MAILBOX_OPTIONS, type ResolvedMailboxOptions } from '../mailbox.js';
import type { CallRequest } from '../messages.js';
import type { MonitorRef, Ref } from '../ref.js';
import type { SendMode } from './frame-link.js';
import { callFailure, failureToError, portableReason } from './failures.js';
import { speaksFor } from './frame-trust.js';
import { FrameKind, type CallFailure, type ControlFrame, type Frame } from './frames.js';
import type { RoutedSystem, Router, RouterStats, Watcher } from './router.js';
import { processRefs, type RefTable } from './ref-table.js';
import { RemoteLinks } from './remote-links.js';
import { deliverDown, RemoteMonitors } from './remote-monitors.js';
import type { RouterPort } from './router-port.js';
import { decodeFrame, encodeFrame } from './wire.js';

/**
 * What the main system and every host share: the kernel's view of links, monitors and calls that
 * reach across a boundary, and the handling of the frames that carry them. A subclass says how a
 * frame reaches a creation (`transmit`), whether that creation is up (`reachable`), and handles
 * names, spawning and host lifetime (`control`).
 *
 * Bookkeeping, so that a host's death turns into the right signals on this side: the links and
 * monitors that cross the boundary (remote-links.ts, remote-monitors.ts), and `#calls`, the calls
 * from here waiting on a remote callee.
 */
export abstract class RouterCore implements Router {
  readonly stats: RouterStats = {
    framesSent: 0,
    framesReceived: 0,
    framesDropped: 0,
    messagesDropped: 0,
    framesForged: 0,
    channelViolations: 0,
    hostsTerminated: 0,
    bytesSent: 0,
    bytesReceived: 0,
  };
  protected readonly creation: number;
  protected readonly limitBytes: number;
  /** Creations known to be gone: anything addressed to them is answered here (`noproc`). */
  protected readonly down = new Set<number>();
  readonly #links: RemoteLinks;
  readonly #monitors: RemoteMonitors;
  readonly #calls = new Map<number, CallRequest>();
  /** Remote actors seen to exit (a DOWN, a link's exit, a failed call), for `isAlive`. */
  readonly #dead = new WeakSet<Ref>();
  /**
   * Mailbox options of remote actors, where known (the hub learns them at spawn): a send that does
   * not fit a channel's budget follows the target's overflow policy; unknown targets, the default.
   */
  protected readonly mailboxes = new WeakMap<Ref, ResolvedMailboxOptions>();
  #nextCall = 0;
  readonly #calleeOf = (id: number): Ref | undefined => this.#calls.get(id)?.callee;
  readonly #owns = (ref: Ref, from: number): boolean => this.owns(ref, from);

  constructor(
    protected readonly system: RoutedSystem,
    /** Cap on one encoded frame; the system's payload cap unless the channel needs a smaller one. */
    limitBytes = system.payloadLimitBytes,
    /** Where refs in frames are interned: the process's table, or a node's own. */
    protected readonly refs: RefTable = processRefs,
  ) {
    this.creation = system.creation;
    this.limitBytes = limitBytes;
    const port: RouterPort = {
      system,
      router: this,
      creation: this.creation,
      reachable: (creation) => this.reachable(creation),
      post: (destination, frame) => this.post(destination, frame),
      signal: (destination, reason, build) => this.signal(destination, reason, build),
    };
    this.#links = new RemoteLinks(port, refs);
    this.#monitors = new RemoteMonitors(port);
  }

  /**
   * Hands encoded bytes to whatever carries frames to `destination`; false when a `user` frame does
   * not fit that channel's in-flight budget (nothing was sent).
   */
  protected abstract transmit(destination: number, bytes: Uint8Array, mode: SendMode): boolean;
  /** The creation a frame's header names: its destination (host to main) or its source (main to host). */
  protected abstract headerFor(destination: number): number;

  /** The frame cap of what goes to `destination` (a host may have a cap of its own). */
  protected limitFor(_destination: number): number {
    return this.limitBytes;
  }
  /** Frames from `from` need no check of whose actors they are about (the system itself, a host's parent). */
  protected trusts(from: number): boolean {
    return from === this.creation;
  }
  /**
   * The actor `ref` belongs to the system frames from `from` come from, so those frames may speak
   * for it (link it, report its exit). Between a system and its hosts that is its creation.
   */
  protected owns(ref: Ref, from: number): boolean {
    return ref.creation === from;
  }
  /**
   * `ref` names an actor frames arriving here may be addressed to: this system's own (a node's link
   * also accepts the node's placed actors, which the system routes on).
   */
  protected accepts(ref: Ref): boolean {
    return ref.creation === this.creation && ref.node === this.system.node;
  }
  /** The system of `creation` is up, as far as this side knows. */
  protected abstract reachable(creation: number): boolean;
  /** Names, spawning and host lifetime; `from` is the creation the frame arrived from. */
  protected abstract control(frame: ControlFrame, from: number): void;

  abstract sendName(name: string, message: unknown): boolean;
  abstract whereis(name: string): Ref | undefined;
  abstract registered(name: string, ref: Ref): void;
  abstract unregistered(name: string, ref: Ref): void;
  abstract shutdown(): void;

  /** Best effort: the actor's system is up and this side has not seen it exit. */
  isAlive(target: Ref): boolean {
    return this.reachable(target.creation) && !this.#dead.has(this.refs.find(target));
  }

  canonical(ref: Ref): Ref {
    return this.refs.canonical(ref);
  }

  // ---- outgoing: the kernel's hooks ----------------------------------------------------------

  /**
   * Encodes and sends; throws PayloadTooLarge or NotSerializable (user payloads surface them). A send
   * that does not fit the channel's budget follows the target's overflow policy: `reject` throws
   * MailboxFull, the drop policies drop it (counted); a call fails with MailboxFull.
   */
  protected post(destination: number, frame: Frame): void {
    const bytes = encodeFrame(this.headerFor(destination), frame, this.limitFor(destination), this.refs);
    const kind = frame[0];
    const user = kind === FrameKind.Send || kind === FrameKind.Call || kind === FrameKind.SendName;
    if (!this.transmit(destination, bytes, user ? 'user' : 'signal')) {
      const target = kind === FrameKind.Send ? frame[1] : kind === FrameKind.Call ? frame[3] : undefined;
      const mailbox = (target !== undefined ? this.mailboxes.get(this.refs.find(target)) : undefined) ?? DEFAULT_MAILBOX_OPTIONS;
      // As locally, a dropped call fails at once rather than leaving its caller to time out.
      if (target !== undefined && (mailbox.overflow === 'reject' || kind === FrameKind.Call)) {
        throw new MailboxFull(target, mailbox.capacity);
      }
      this.stats.messagesDropped++;
      return;
    }
    this.stats.framesSent++;
  }

  /**
   * Sends a kernel signal that must arrive even when its exit reason cannot be encoded (or is over
   * the cap): the reason is then replaced by a plain error that says so.
   */
  protected signal(destination: number, reason: ExitReason, build: (reason: ExitReason) => Frame): void {
    if (!this.reachable(destination)) return;
    try {
      this.post(destination, build(reason));
    } catch (error) {
      try {
        this.post(destination, build(portableReason(reason, error)));
      } catch {
        this.stats.framesDropped++;
      }
    }
  }

  send(target: Ref, message: unknown): void {
    if (!this.reachable(target.creation)) return;
    this.post(target.creation, [FrameKind.Send, target, message]);
  }

  call(call: CallRequest): void {
    const callee = call.callee;
    if (!this.reachable(callee.creation)) throw new NoProc(callee);
    const id = ++this.#nextCall;
    this.post(callee.creation, [FrameKind.Call, this.creation, id, callee, call.request, call._timeoutMs]);
    this.#calls.set(id, call);
    const settle = call._settle!;
    call._settle = (settled, ok, value) => {
      this.#calls.delete(id);
      settle(settled, ok, value);
    };
  }

  exitSignal(target: Ref, from: Ref, reason: ExitReason): void {
    this.signal(target.creation, reason, (sent) => [FrameKind.Exit, target, from, sent]);
  }

  link(from: Ref, target: Ref): void {
    this.#links.link(from, target);
  }

  unlink(from: Ref, target: Ref): void {
    this.#links.unlink(from, target);
  }

  linkExited(target: Ref, from: Ref, reason: ExitReason): void {
    this.#links.linkExited(target, from, reason);
  }

  monitor(watcher: Watcher, target: Ref, id: MonitorRef): void {
    this.#monitors.monitor(watcher, target, id);
  }

  demonitor(target: Ref, id: MonitorRef): void {
    this.#monitors.demonitor(target, id);
  }

  // ---- incoming -------------------------------------------------------------------------------

  /** Decodes and handles a frame addressed to this system; malformed frames are counted and dropped. */
  protected receiveFrame(bytes: Uint8Array, from: number): void {
    this.stats.framesReceived++;
    const frame = this.decodeFrom(bytes, from);
    if (frame === undefined) return;
    try {
      this.dispatch(frame, from);
    } catch {
      // A frame that named something it should not (a foreign ref where a local one belongs).
      this.stats.framesDropped++;
    }
  }

  /**
   * Decodes a frame from the system `from`: undefined (counted) when it is malformed or speaks for
   * actors that are not that system's.
   */
  protected decodeFrom(bytes: Uint8Array, from: number): Frame | undefined {
    const frame = decodeFrame(bytes, this.refs);
    if (frame === undefined) {
      this.stats.framesDropped++;
      return undefined;
    }
    if (!this.trusts(from) && !speaksFor(frame, from, this.#calleeOf, this.#owns)) {
      this.stats.framesForged++;
      return undefined;
    }
    return frame;
  }

  protected dispatch(frame: Frame, from: number): void {
    switch (frame[0]) {
      case FrameKind.Send: {
        const [, to, message] = frame;
        if (!this.accepts(to)) throw new TypeError('misaddressed');
        try {
          this.system.send(to, message);
        } catch {
          // A full mailbox cannot refuse a sender on another side of a boundary: the message is dropped.
          this.stats.messagesDropped++;
        }
        return;
      }
      case FrameKind.Call:
        this.#serveCall(frame[1], frame[2], frame[3], frame[4], frame[5]);
        return;
      case FrameKind.Reply: {
        const [, id, ok, value] = frame;
        const call = this.#calls.get(id);
        if (call === undefined) return;
        const result = ok ? value : failureToError(call, value);
        if (result instanceof CalleeExited || result instanceof NoProc) this.#dead.add(this.refs.find(call.callee));
        call._settle?.(call, ok, result);
        return;
      }
      case FrameKind.Exit: {
        const [, to, sender, reason] = frame;
        if (!this.accepts(to)) throw new TypeError('misaddressed');
        this.system.exitSignal(to, sender, reason);
        return;
      }
      case FrameKind.Link: {
        const [, remote, to] = frame;
        if (!this.accepts(to) || this.accepts(remote)) throw new TypeError('misaddressed');
        this.#links.linked(remote, to);
        return;
      }
      case FrameKind.Unlink:
        this.#links.unlinked(frame[1], frame[2]);
        return;
      case FrameKind.LinkExit: {
        const [, to, remote, reason] = frame;
        if (!this.accepts(to)) throw new TypeError('misaddressed');
        this.#links.exited(to, remote);
        this.#dead.add(remote);
        this.system.linkExit(to, remote, reason);
        return;
      }
      case FrameKind.Monitor:
        if (!this.accepts(frame[3])) throw new TypeError('misaddressed');
        this.#monitors.watch(frame[1], frame[2], frame[3]);
        return;
      case FrameKind.Demonitor:
        this.#monitors.unwatch(frame[1], frame[2]);
        return;
      case FrameKind.Down: {
        const [, id, ref, reason] = frame;
        const watcher = this.#monitors.takeDown(id, ref);
        if (watcher === undefined) return;
        this.#dead.add(ref);
        deliverDown(watcher, id, ref, reason);
        return;
      }
      case FrameKind.HostDown:
        this.hostDown(frame[1], frame[2]);
        return;
      case FrameKind.SendName:
      case FrameKind.NameAdd:
      case FrameKind.NameRemove:
      case FrameKind.Spawn:
      case FrameKind.Spawned:
      case FrameKind.SpawnFailed:
      case FrameKind.Idle:
      case FrameKind.Stop:
        this.control(frame, from);
        return;
      default: {
        const unknown: never = frame;
        throw new TypeError(`unknown frame ${String((unknown as readonly unknown[])[0])}`);
      }
    }
  }

  #serveCall(origin: number, id: number, to: Ref, request: unknown, timeoutMs: number): void {
    if (!this.accepts(to)) {
      this.#answer(origin, id, false, ['noproc'] satisfies CallFailure);
      return;
    }
    try {
      // Settled by callbacks rather than a promise: the reply is posted from the replier's stack.
      this.system.callFor(
        to,
        request,
        timeoutMs,
        (value) => this.#answer(origin, id, true, value),
        (error) => this.#answer(origin, id, false, callFailure(error)),
      );
    } catch (error) {
      this.#answer(origin, id, false, callFailure(error));
    }
  }

  #answer(origin: number, id: number, ok: boolean, value: unknown): void {
    if (!this.reachable(origin)) return;
    try {
      this.post(origin, [FrameKind.Reply, id, ok, value]);
    } catch (error) {
      // A reply over the cap (or unencodable) fails the call on the caller's side, typed.
      try {
        this.post(origin, [FrameKind.Reply, id, false, callFailure(error)]);
      } catch {
        this.stats.framesDropped++;
      }
    }
  }

  /**
   * The system of `creation` is gone (its host died or stopped): everything here linked to or
   * monitoring its actors gets `reason`, and calls waiting on them fail with CalleeExited. A host
   * stopped because it was idle had no actors left: then whatever still waited on it was addressed
   * to an actor already gone, and sees `noproc` (calls fail with NoProc), as it would have there.
   */
  protected hostDown(creation: number, reason: ExitReason): void {
    if (creation === this.creation || this.down.has(creation)) return;
    this.down.add(creation);
    const idle = reason === 'noproc';
    this.lost(
      creation,
      (ref) => ref.creation === creation,
      reason,
      (call) => (idle ? new NoProc(call.callee) : new CalleeExited(call.callee, reason)),
    );
  }

  /**
   * Everything here that reached the system `origin` is gone: remote watchers it held are dropped,
   * and of what local actors held on its actors (those `gone` matches), calls fail with
   * `failure(call)`, monitors get `DOWN` and links the exit signal, both with `reason`.
   */
  protected lost(origin: number, gone: (ref: Ref) => boolean, reason: ExitReason, failure: (call: CallRequest) => unknown): void {
    for (const call of this.#calls.values()) {
      if (gone(call.callee)) call._settle?.(call, false, failure(call));
    }
    this.#monitors.forget(origin);
    // Both tables are emptied before any signal goes out.
    const downs = this.#monitors.take(gone);
    const links = this.#links.take(gone);
    for (const [id, watcher, target] of downs) deliverDown(watcher, id, target, reason);
    for (const [remote, locals] of links) for (const local of locals) this.system.linkExit(local, remote, reason);
  }

  /** Links, monitors and calls that cross a boundary from here; for tests and process info. */
  get remoteCounts(): { links: number; monitors: number; watched: number; calls: number } {
    const monitors = this.#monitors;
    return { links: this.#links.size, monitors: monitors.size, watched: monitors.watchedSize, calls: this.#calls.size };
  }
}
