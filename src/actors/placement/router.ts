import type { ActorCell } from '../actor-cell.js';
import type { ActorRuntime } from '../behaviour.js';
import type { ExitReason } from '../exit.js';
import type { CallRequest } from '../messages.js';
import type { MonitorRef, Ref } from '../ref.js';

/** Who holds a monitor: an actor, or a kernel callback (`watch`, `exited`). */
export type Watcher = ActorCell | ((reason: ExitReason, ref: Ref) => void);

/** Counters of a router, for process info and tests. */
export interface RouterStats {
  framesSent: number;
  framesReceived: number;
  /** Malformed, oversized or misaddressed frames, dropped on arrival. */
  framesDropped: number;
  /**
   * Messages dropped: a local mailbox refused a remote one (full), a name found no receiver, or a
   * send did not fit the channel's in-flight budget under a drop policy.
   */
  messagesDropped: number;
  /** Frames a host sent about actors that are not its own (or only its parent may send): dropped. */
  framesForged: number;
  /** Hosts cut off for breaking the channel's rules (garbage, oversized records, over budget). */
  channelViolations: number;
  /** Hosts ended by `terminateHost` (a task's hard timeout, a closed executor). */
  hostsTerminated: number;
  /** Bytes written to and read from host channels, framing included. */
  bytesSent: number;
  bytesReceived: number;
}

/**
 * The kernel's hook for refs that live elsewhere: a ref whose creation differs from the local
 * system's and that has no direct route to a cell. The kernel calls it only on that cold path, so a
 * system without placed actors pays nothing, and local sends and calls never see it.
 *
 * Every method runs synchronously in the caller's stack and never runs actor code.
 */
export interface Router {
  /** A user message for a ref of another creation; throws PayloadTooLarge or NotSerializable. */
  send(target: Ref, message: unknown): void;
  /** A name that is not registered locally: returns false when the router does not know it either. */
  sendName(name: string, message: unknown): boolean;
  /**
   * Delivers a call to `call.callee` (of another creation). The kernel has armed the caller-side
   * timer; the router settles the call through `call._settle` on a reply, on the callee's exit or
   * when its host dies. Throws (PayloadTooLarge, NoProc, …) to fail the call at once.
   */
  call(call: CallRequest): void;
  /** A name registered elsewhere, as far as this system knows. */
  whereis(name: string): Ref | undefined;
  exitSignal(target: Ref, from: Ref, reason: ExitReason): void;
  /**
   * `from` links to `target`, which this router reaches: the router tells the other side (or answers
   * `noproc`). `from` is a local actor whose `links` already holds `target`, or an actor elsewhere
   * whose link another router relays through this system (a placed actor and another node's).
   */
  link(from: Ref, target: Ref): void;
  unlink(from: Ref, target: Ref): void;
  /** `from`, linked to `target` (which this router reaches), exited with `reason`. */
  linkExited(target: Ref, from: Ref, reason: ExitReason): void;
  /** `id` is already in the watcher's `monitoring` (if it is an actor); a `DOWN` follows the target's exit. */
  monitor(watcher: Watcher, target: Ref, id: MonitorRef): void;
  demonitor(target: Ref, id: MonitorRef): void;
  /** A local actor took or released a name. */
  registered(name: string, ref: Ref): void;
  unregistered(name: string, ref: Ref): void;
  /** Best effort: the host of `target` is up. */
  isAlive(target: Ref): boolean;
  /**
   * The object this router stands `ref` for (the one its frames decode to): what a local link set
   * keys a remote actor by, so that the exit coming back finds the entry whatever object the link
   * was made with.
   */
  canonical(ref: Ref): Ref;
  /** The local system shut down (every local actor has exited). */
  shutdown(): void;
}

/**
 * The system as its router sees it: an interface, so that placement (loaded by the system on
 * first use) never imports the system back.
 */
export interface RoutedSystem extends ActorRuntime {
  readonly payloadLimitBytes: number;
  readonly callTimeoutMs: number;
  readonly stopped: boolean;
  readonly actorCount: number;
  /** Installs the router for refs of other creations; throws if one is installed already. */
  setRouter(router: Router): void;
  /** Names held by local actors. */
  registered(): string[];
  exitSignal(target: Ref, from: Ref, reason: ExitReason): void;
  /**
   * A linked actor elsewhere exited: `target` drops the link and gets the signal; a `target` that is
   * not this system's goes on to its route.
   */
  linkExit(target: Ref, from: Ref, reason: ExitReason): void;
  /** The router of an actor elsewhere (another creation or node); undefined for this system's own. */
  routeOf(ref: Ref): Router | undefined;
  /** The live local actor `ref` names, compared by value (a ref rebuilt from its parts finds it too). */
  cellOf(ref: Ref): ActorCell | undefined;
  linkCells(cell: ActorCell, target: Ref): void;
  unlinkCells(cell: ActorCell, target: Ref): void;
  watch(target: Ref, callback: (reason: ExitReason, ref: Ref) => void): () => void;
  /** A call served for another side: settles through `resolve` or `reject` (a local callee needs no promise). */
  callFor(target: Ref, request: unknown, timeoutMs: number | undefined, resolve: (value: unknown) => void, reject: (error: unknown) => void): void;
}
