/**
 * Auto-connect (Erlang's default `dist_auto_connect`): the kernel's route to nodes that are not
 * connected. The first traffic to such a node starts one connection attempt and is held, in order,
 * in a bounded pending buffer; on nodeup it is replayed into the new link (so per-pair order holds),
 * and if the attempt fails it is replayed into Unreachable, which does exactly what an unreachable
 * node always did (sends counted, calls NodeDown, monitors and links `noconnection`).
 *
 * A hostile ref can name any host:port: attempts at once are capped (`maxPendingAutoConnects`), a
 * failed node is backed off (capped, per node, in a bounded table) and traffic to it meanwhile fails
 * at once; so no input makes the node open unbounded connections or retry in a storm.
 */
import { exponentialBackoff } from '../actors/backoff.js';
import type { ClockTimer } from '../actors/clock.js';
import type { CallRequest } from '../actors/messages.js';
import type { ExitReason } from '../actors/exit.js';
import type { MonitorRef, Ref } from '../actors/ref.js';
import { FrameKind } from '../actors/placement/frames.js';
import type { RefTable } from '../actors/placement/ref-table.js';
import type { RoutedSystem, Router, Watcher } from '../actors/placement/router.js';
import { encodeFrame } from '../actors/placement/wire.js';
import { NodeAutoConnectLimit, NodeLinkFull } from './errors.js';
import { parseNodeName } from './names.js';
import type { FullPolicy } from './options.js';
import type { Unreachable } from './unreachable.js';

export interface AutoConnectSettings {
  readonly enabled: boolean;
  readonly pendingBytes: number;
  readonly pendingCount: number;
  readonly maxPending: number;
  /** How long one attempt may take before its traffic is failed. */
  readonly attemptMs: number;
  readonly backoffMinMs: number;
  readonly backoffMaxMs: number;
  readonly fullPolicy: FullPolicy;
  /** The node's `allow` list, if any: no other node is auto-connected. */
  readonly allow: ReadonlySet<string> | undefined;
}

/** What the node does for auto-connect. */
export interface AutoConnectHost {
  readonly name: string;
  /** Starts one connection attempt (deduplicated by the node); its end is told by `up` or `failed`. */
  dial(node: string): void;
}

export interface AutoConnectStats {
  /** Connection attempts started by traffic. */
  readonly attempts: number;
  /** Attempts that ended with the node up (pending traffic flushed). */
  readonly connected: number;
  /** Attempts that failed or timed out (pending traffic failed as noconnection). */
  readonly failed: number;
  /** Traffic to a node not connected refused because `maxPendingAutoConnects` attempts were in progress. */
  readonly limited: number;
  /** Traffic failed at once because its node was backed off after a failed attempt. */
  readonly backedOff: number;
  /** Sends dropped and calls refused because a pending buffer was full. */
  readonly pendingFull: number;
  /** Frames replayed into a link that came up. */
  readonly flushed: number;
  /** Nodes being connected now, and frames and bytes they hold. */
  readonly pendingNodes: number;
  readonly pendingFrames: number;
  readonly pendingBytes: number;
}

/** Failed nodes remembered for backoff; the oldest are forgotten past it (a hostile ref may name any node). */
export const MAX_BACKOFF_ENTRIES = 4_096;
/** What a signal (link, monitor, exit) counts for in a pending buffer. */
const SIGNAL_BYTES = 64;

interface Op {
  readonly bytes: number;
  /** `cause`: why the attempt failed, when replayed into Unreachable (a call's NodeDown carries it). */
  run(router: Router, cause?: unknown): void;
}

interface Pending {
  readonly ops: Op[];
  bytes: number;
  readonly timer: ClockTimer;
}

interface Backoff {
  failures: number;
  until: number;
}

export class AutoConnect implements Router {
  readonly #pending = new Map<string, Pending>();
  readonly #backoff = new Map<string, Backoff>();
  #stopped = false;
  readonly #counts = { attempts: 0, connected: 0, failed: 0, limited: 0, backedOff: 0, pendingFull: 0, flushed: 0 };

  constructor(
    readonly system: RoutedSystem,
    readonly unreachable: Unreachable,
    readonly settings: AutoConnectSettings,
    readonly host: AutoConnectHost,
    readonly refs: RefTable,
  ) {}

  stats(): AutoConnectStats {
    let pendingFrames = 0;
    let pendingBytes = 0;
    for (const entry of this.#pending.values()) {
      pendingFrames += entry.ops.length;
      pendingBytes += entry.bytes;
    }
    return { ...this.#counts, pendingNodes: this.#pending.size, pendingFrames, pendingBytes };
  }

  /** True while an attempt to `node` holds traffic. */
  isPending(node: string): boolean {
    return this.#pending.has(node);
  }

  // ---- the node's hooks ------------------------------------------------------------------------

  /** `node` is up and routed: its pending traffic goes out first, in order (same turn, nothing interleaves). */
  up(node: string, router: Router): void {
    this.#backoff.delete(node);
    const entry = this.#take(node);
    if (entry === undefined) return;
    this.#counts.connected++;
    this.#counts.flushed += entry.ops.length;
    for (const op of entry.ops) op.run(router);
  }

  /**
   * The attempt to `node` failed (refused, unreachable, timed out): its traffic fails as
   * noconnection, and its calls with NodeDown carrying `cause` (ECONNREFUSED, a refused handshake).
   */
  failed(node: string, cause?: unknown): void {
    const entry = this.#take(node);
    if (entry === undefined) return;
    this.#counts.failed++;
    const previous = this.#backoff.get(node);
    const failures = (previous?.failures ?? 0) + 1;
    const { backoffMinMs, backoffMaxMs } = this.settings;
    const delay = exponentialBackoff({ baseMs: backoffMinMs, capMs: backoffMaxMs, jitter: [0.75, 1.25] }, failures - 1);
    this.#backoff.delete(node);
    this.#backoff.set(node, { failures, until: this.system.clock.now() + delay });
    if (this.#backoff.size > MAX_BACKOFF_ENTRIES) this.#backoff.delete(this.#backoff.keys().next().value!);
    for (const op of entry.ops) op.run(this.unreachable, cause);
  }

  /** The node stops: whatever is pending fails. */
  stop(): void {
    this.#stopped = true;
    for (const node of [...this.#pending.keys()]) this.failed(node);
  }

  #take(node: string): Pending | undefined {
    const entry = this.#pending.get(node);
    if (entry === undefined) return undefined;
    this.#pending.delete(node);
    this.system.clock.clearTimer(entry.timer);
    return entry;
  }

  /**
   * The pending buffer of `node`, starting an attempt if `start`; undefined when traffic goes to
   * Unreachable (disabled, backed off, not a node name) or, as 'limited', past the cap on attempts.
   */
  #entry(node: string, start: boolean): Pending | 'limited' | undefined {
    const existing = this.#pending.get(node);
    if (existing !== undefined || !start) return existing;
    const { enabled, allow } = this.settings;
    if (!enabled || this.#stopped || node === this.host.name || (allow !== undefined && !allow.has(node))) return undefined;
    const backoff = this.#backoff.get(node);
    if (backoff !== undefined && this.system.clock.now() < backoff.until) {
      this.#counts.backedOff++;
      return undefined;
    }
    try {
      parseNodeName(node);
    } catch {
      return undefined;
    }
    if (this.#pending.size >= this.settings.maxPending) {
      this.#counts.limited++;
      return 'limited';
    }
    const timer = this.system.clock.setTimer(() => this.failed(node), this.settings.attemptMs);
    this.system.clock.unrefTimer?.(timer);
    const entry: Pending = { ops: [], bytes: 0, timer };
    this.#pending.set(node, entry);
    this.#counts.attempts++;
    this.host.dial(node);
    return entry;
  }

  /** A user frame: false if it does not fit (the full policy is applied here). */
  #admitUser(node: string, entry: Pending, bytes: number): boolean {
    const { pendingBytes, pendingCount, fullPolicy } = this.settings;
    if (entry.bytes + bytes <= pendingBytes && entry.ops.length < pendingCount) return true;
    this.#counts.pendingFull++;
    // As a full link's `disconnect`: the attempt is given up, its traffic fails as noconnection.
    if (fullPolicy === 'disconnect') this.failed(node);
    return false;
  }

  /**
   * A signal: held beyond the user cap up to twice it, as a link lets signals wait; past that the
   * attempt is given up (signals are never silently dropped: they get noconnection). False then.
   */
  #admitSignal(node: string, entry: Pending): boolean {
    const { pendingBytes, pendingCount } = this.settings;
    if (entry.bytes + SIGNAL_BYTES <= 2 * pendingBytes && entry.ops.length < 2 * pendingCount) return true;
    this.failed(node);
    return false;
  }

  #signal(node: string, start: boolean, run: (router: Router) => void): void {
    const entry = this.#entry(node, start);
    if (typeof entry === 'object' && this.#admitSignal(node, entry)) {
      entry.ops.push({ bytes: SIGNAL_BYTES, run });
      entry.bytes += SIGNAL_BYTES;
      return;
    }
    run(this.unreachable);
  }

  /** Encoded size of a user message (and its checks: PayloadTooLarge, NotSerializable, thrown to the sender). */
  #size(target: Ref, message: unknown): number {
    return encodeFrame(0, [FrameKind.Send, target, message], this.system.payloadLimitBytes, this.refs).byteLength;
  }

  // ---- the Router -------------------------------------------------------------------------------

  send(target: Ref, message: unknown): void {
    const entry = this.#entry(target.node, true);
    if (typeof entry !== 'object') return this.unreachable.send();
    const bytes = this.#size(target, message);
    if (!this.#admitUser(target.node, entry, bytes)) return this.unreachable.send();
    entry.ops.push({ bytes, run: (router) => router.send(target, message) });
    entry.bytes += bytes;
  }

  /** `{name, node}` (a PeerRouter's own send by name); false when it goes the way of Unreachable. */
  sendNamed(node: string, name: string, message: unknown, sendNamed: (router: Router) => void): boolean {
    const entry = this.#entry(node, true);
    if (typeof entry !== 'object') return false;
    const bytes = encodeFrame(0, [FrameKind.SendName, name, message], this.system.payloadLimitBytes, this.refs).byteLength;
    if (!this.#admitUser(node, entry, bytes)) return false;
    entry.ops.push({ bytes, run: (router) => (router === this.unreachable ? this.unreachable.send() : sendNamed(router)) });
    entry.bytes += bytes;
    return true;
  }

  sendName(): boolean {
    return false;
  }

  call(call: CallRequest): void {
    const node = call.callee.node;
    const entry = this.#entry(node, true);
    if (entry === 'limited') throw new NodeAutoConnectLimit(node, this.settings.maxPending);
    if (entry === undefined) return this.unreachable.call(call);
    const bytes = this.#size(call.callee, call.request);
    if (!this.#admitUser(node, entry, bytes)) throw new NodeLinkFull(node, this.settings.pendingBytes);
    entry.ops.push({
      bytes,
      run: (router, cause) => {
        // Timed out while pending: nothing to deliver.
        if (!call.open) return;
        try {
          if (router === this.unreachable) this.unreachable.call(call, cause);
          else router.call(call);
        } catch (error) {
          call._settle?.(call, false, error);
        }
      },
    });
    entry.bytes += bytes;
  }

  whereis(): Ref | undefined {
    return undefined;
  }

  exitSignal(target: Ref, from: Ref, reason: ExitReason): void {
    this.#signal(target.node, true, (router) => router.exitSignal(target, from, reason));
  }

  link(from: Ref, target: Ref): void {
    this.#signal(target.node, true, (router) => router.link(from, target));
  }

  // Undoing or ending what is pending never starts an attempt of its own.
  unlink(from: Ref, target: Ref): void {
    this.#signal(target.node, false, (router) => router.unlink(from, target));
  }

  linkExited(target: Ref, from: Ref, reason: ExitReason): void {
    this.#signal(target.node, false, (router) => router.linkExited(target, from, reason));
  }

  monitor(watcher: Watcher, target: Ref, id: MonitorRef): void {
    this.#signal(target.node, true, (router) => router.monitor(watcher, target, id));
  }

  demonitor(target: Ref, id: MonitorRef): void {
    this.#signal(target.node, false, (router) => router.demonitor(target, id));
  }

  registered(): void {}

  unregistered(): void {}

  isAlive(): boolean {
    return false;
  }

  /** The node's table, as the link that comes up will use: a link made now is found by its exit later. */
  canonical(ref: Ref): Ref {
    return this.refs.canonical(ref);
  }

  shutdown(): void {
    this.unreachable.shutdown();
  }
}
