/**
 * A global registry, like Erlang's `global`: a name held by one actor cluster-wide.
 *
 * Every node keeps the whole table; a node is the authority for the names its own actors hold
 * (it watches them and announces additions and removals). `register` asks every connected node
 * to reserve the name (a short lock there), and commits only if all agree; a name is freed when
 * its actor exits, when it is unregistered, or on every other node when its node goes down.
 *
 * Two nodes that could not see each other (a partition) may both give out a name. When their
 * tables meet again (the `hello`/`sync` exchange on nodeup, or a late `add`), every node applies
 * the same rule, so all converge: the registration made earlier (`at`, the owner's wall clock in
 * ms) wins; on a tie the smaller node name, then the smaller actor id and creation. The loser's
 * node drops it and sends the losing actor `{ type: 'global_name_conflict', name, winner }`; the
 * actor itself keeps running (it decides whether to exit).
 *
 * A peer speaks only for its own actors (messages are attributed to their link, peer-service.ts),
 * and an `at` from the wire is checked before the rule reads it: a finite number, not negative, and
 * not past this node's clock by more than `maxClockDriftMs`. An entry with any other time is
 * refused (counted), so a peer cannot take a name with `-1`, nor stall agreement with NaN.
 */
import { Ref } from '../actors/ref.js';
import { boundedOption as bounded, checkClusterName, MAX_CLUSTER_NAME_LENGTH, checkServiceOptions, ClusterLimitReached, GlobalNameNotFound, GlobalNameTaken, InvalidClusterArgument } from './cluster-errors.js';
import type { Registry } from 'prom-client';
import { clusterMetrics } from './cluster-metrics.js';
import type { Node } from './node.js';
import { PeerService } from './peer-service.js';

export const GLOBAL_NAME = 'molo.global';

/** What the losing actor of a conflict receives. */
export interface GlobalNameConflict {
  readonly type: 'global_name_conflict';
  readonly name: string;
  readonly winner: Ref;
}

export interface GlobalOptions {
  /** Names the table holds (all nodes' together); default 100,000, at most 10,000,000. */
  readonly maxNames?: number;
  /** How long a reservation waits for a node's answer and holds its lock there; default 5,000 ms (100..60,000). */
  readonly lockTimeoutMs?: number;
  /** Attempts when another node holds a lock on the name (a concurrent register); default 5 (1..50). */
  readonly attempts?: number;
  /**
   * How far past this node's clock a peer's registration time may be (its clock ahead of ours);
   * later times are refused. Default 60,000 ms (1,000..86,400,000).
   */
  readonly maxClockDriftMs?: number;
  /** `molo_global_*` metrics (docs/telemetry.md). */
  readonly registry?: Registry;
}

export interface GlobalEntry {
  readonly name: string;
  readonly ref: Ref;
  /** When it was registered, on its node's clock (ms since the epoch). */
  readonly at: number;
}

export interface GlobalStats {
  readonly names: number;
  /** Conflicts this node resolved (on partition heal or a race). */
  readonly conflicts: number;
  /** Local actors that lost a name to a conflict and were told. */
  readonly lost: number;
  /** Peers' entries refused for their registration time (not finite, negative, or too far ahead). */
  readonly refused: number;
}

const OPTION_KEYS = ['maxNames', 'lockTimeoutMs', 'attempts', 'maxClockDriftMs', 'registry'] as const;

type WireEntry = readonly [string, Ref, number];

interface Lock {
  readonly node: string;
  readonly ref: Ref;
  readonly until: number;
}

/**
 * The earlier registration wins; then the smaller node name; then the smaller actor id, then
 * creation: a total order on what every node sees alike, so all pick the same winner whatever the
 * order entries arrive in. Times are checked before they get here (finite, see validTime).
 */
export function globalWinner(a: GlobalEntry, b: GlobalEntry): GlobalEntry {
  if (a.at !== b.at) return a.at < b.at ? a : b;
  if (a.ref.node !== b.ref.node) return a.ref.node < b.ref.node ? a : b;
  if (a.ref.id !== b.ref.id) return a.ref.id < b.ref.id ? a : b;
  return a.ref.creation <= b.ref.creation ? a : b;
}

/** A registration time a peer may announce: finite, not negative, at most `driftMs` past `wallNow`. */
export function validTime(at: unknown, wallNow: number, driftMs: number): at is number {
  return typeof at === 'number' && Number.isFinite(at) && at >= 0 && at <= wallNow + driftMs;
}

/** Refs compared by value: one that came back over a link may be another object. */
export function sameRef(a: unknown, b: unknown): boolean {
  return a instanceof Ref && b instanceof Ref && a.node === b.node && a.id === b.id && a.creation === b.creation;
}


/** Starts the global registry on `node` (one per node). Every node of the cluster must run it. */
export function startGlobal(node: Node, options: GlobalOptions = {}): GlobalRegistry {
  return new GlobalRegistry(node, options);
}

export class GlobalRegistry {
  readonly #node: Node;
  readonly #service: PeerService;
  readonly #table = new Map<string, GlobalEntry>();
  /** Unwatch functions of this node's holders, by name. */
  readonly #watches = new Map<string, () => void>();
  /** Reservations: by peers (for their register), and this node's own in progress. */
  readonly #locks = new Map<string, Lock>();
  readonly #maxNames: number;
  readonly #lockMs: number;
  readonly #attempts: number;
  readonly #driftMs: number;
  #conflicts = 0;
  #lost = 0;
  #refused = 0;

  constructor(node: Node, options: GlobalOptions) {
    this.#node = node;
    checkServiceOptions(options, OPTION_KEYS);
    this.#maxNames = bounded('maxNames', options.maxNames, 100_000, 1, 10_000_000);
    this.#lockMs = bounded('lockTimeoutMs', options.lockTimeoutMs, 5_000, 100, 60_000);
    this.#attempts = bounded('attempts', options.attempts, 5, 1, 50);
    this.#driftMs = bounded('maxClockDriftMs', options.maxClockDriftMs, 60_000, 1_000, 86_400_000);
    const kinds = ['add', 'remove', 'release', 'unregister', 'reserve'];
    this.#service = new PeerService(node, { name: GLOBAL_NAME, label: 'global', kinds }, {
      snapshot: () => this.#ownEntries(),
      merge: (from, state, kind) => this.#merge(from, state, kind),
      message: (kind, from, body) => this.#message(kind, from, body),
      nodedown: (peer) => this.#nodedown(peer),
      call: (kind, from, body) => (kind === 'reserve' ? this.#reserve(from, body) : null),
    });
    clusterMetrics(options.registry)?.globals.add(this);
  }

  get nodeName(): string {
    return this.#node.name;
  }

  // ---- the API ----------------------------------------------------------------------------

  /**
   * Registers `ref` (an actor of this node) as `name` cluster-wide. Resolves once every connected
   * node agreed; fails with GlobalNameTaken if the name is held, or another node kept it locked
   * through every attempt. Nodes that do not answer within `lockTimeoutMs` (down, partitioned) are
   * not waited for: a conflict with them is resolved by the rule when they meet again.
   */
  async register(name: string, ref: Ref): Promise<void> {
    checkClusterName('global name', name);
    if (!(ref instanceof Ref) || ref.node !== this.#node.name || !this.#node.system.isAlive(ref)) {
      throw new InvalidClusterArgument('global ref', 'must be a live actor of this node');
    }
    // The holder registering its name again: nothing changes (its `at` stays, so do its conflicts' outcomes).
    if (sameRef(this.#table.get(name)?.ref, ref)) return;
    for (let attempt = 1; ; attempt++) {
      const holder = this.#holder(name, ref);
      if (holder !== undefined) throw new GlobalNameTaken(name, holder);
      if (this.#table.size >= this.#maxNames) throw new ClusterLimitReached('maxNames', this.#maxNames);
      const lock: Lock = { node: this.#node.name, ref, until: this.#now() + this.#lockMs };
      this.#locks.set(name, lock);
      const asked = performance.now();
      const peers = this.#node.nodes();
      const answers = await Promise.all(
        peers.map((peer) => this.#service.call(peer, 'reserve', [name, ref], this.#lockMs).catch(() => ['ok'])),
      );
      if (this.#locks.get(name) === lock) this.#locks.delete(name);
      const refusal = answers.find((answer) => !Array.isArray(answer) || answer[0] !== 'ok') as [string, string] | undefined;
      if (refusal === undefined && this.#holder(name, ref) === undefined && this.#node.system.isAlive(ref)) {
        this.#commit({ name, ref, at: this.#node.system.clock.wallNow() });
        return;
      }
      this.#service.broadcast('release', name, ref);
      if (refusal?.[0] !== 'locked' || attempt >= this.#attempts) {
        if (!this.#node.system.isAlive(ref)) throw new InvalidClusterArgument('global ref', 'the actor exited while registering');
        throw new GlobalNameTaken(name, refusal?.[1] ?? this.#holder(name, ref));
      }
      // Nodes reserving at once all back off, each for a random while that grows with the attempt
      // and with how long asking took (a slow cluster needs wider windows to stop colliding).
      const window = (performance.now() - asked) * 2 + 20 * attempt;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * window * attempt));
    }
  }

  /** Frees `name` (on its owner's node, if that is another; announced to every node). False if nobody held it. */
  unregister(name: string): boolean {
    const entry = this.#table.get(name);
    if (entry === undefined) return false;
    if (entry.ref.node === this.#node.name) this.#drop(name, entry, true);
    else {
      this.#table.delete(name);
      this.#service.sendTo(entry.ref.node, 'unregister', name, entry.ref);
    }
    return true;
  }

  whereis(name: string): Ref | undefined {
    return this.#table.get(name)?.ref;
  }

  /** Sends to the holder of `name`; GlobalNameNotFound if nobody holds it. */
  send(name: string, message: unknown): void {
    const ref = this.#table.get(name)?.ref;
    if (ref === undefined) throw new GlobalNameNotFound(name);
    this.#node.system.send(ref, message);
  }

  /** Calls the holder of `name`; GlobalNameNotFound if nobody holds it. */
  call<Reply = unknown>(name: string, request: unknown, timeoutMs?: number): Promise<Reply> {
    const ref = this.#table.get(name)?.ref;
    if (ref === undefined) return Promise.reject(new GlobalNameNotFound(name));
    return this.#node.system.call<Reply>(ref, request, timeoutMs);
  }

  names(): string[] {
    return [...this.#table.keys()];
  }

  entries(): GlobalEntry[] {
    return [...this.#table.values()];
  }

  stats(): GlobalStats {
    return { names: this.#table.size, conflicts: this.#conflicts, lost: this.#lost, refused: this.#refused };
  }

  /** Peers' messages dropped for speaking for another node or its actors, by kind. */
  forgeries(): Record<string, number> {
    return this.#service.forgeries();
  }

  /** Stops the service here (its names stay until their node goes down or they exit). */
  stop(): void {
    for (const unwatch of this.#watches.values()) unwatch();
    this.#watches.clear();
    this.#service.stop();
  }

  // ---- the protocol -----------------------------------------------------------------------

  /** Who holds or reserves `name` other than `ref`, if anyone. */
  #holder(name: string, ref: Ref): string | undefined {
    const entry = this.#table.get(name);
    if (entry !== undefined && !sameRef(entry.ref, ref)) return entry.ref.node;
    const lock = this.#locks.get(name);
    if (lock !== undefined && lock.until > this.#now() && !sameRef(lock.ref, ref)) return lock.node;
    return undefined;
  }

  #reserve(from: string, body: readonly unknown[]): unknown {
    const [name, ref] = body;
    if (typeof name !== 'string' || !(ref instanceof Ref)) return ['taken', undefined];
    if (ref.node !== from) {
      this.#service.forged('reserve', from, 'reserves for an actor of another node');
      return ['taken', undefined];
    }
    const entry = this.#table.get(name);
    if (entry !== undefined && !sameRef(entry.ref, ref)) return ['taken', entry.ref.node];
    const lock = this.#locks.get(name);
    if (lock !== undefined && lock.until > this.#now() && !sameRef(lock.ref, ref)) return ['locked', lock.node];
    if (this.#locks.size >= this.#maxNames) {
      // Reservations a peer never committed nor released end by time; past the cap, drop the expired ones first.
      const now = this.#now();
      for (const [held, entry] of this.#locks) if (entry.until <= now) this.#locks.delete(held);
      if (this.#locks.size >= this.#maxNames) return ['locked', this.#node.name];
    }
    this.#locks.set(name, { node: from, ref, until: this.#now() + this.#lockMs });
    return ['ok'];
  }

  #commit(entry: GlobalEntry): void {
    this.#table.set(entry.name, entry);
    this.#watch(entry);
    this.#service.broadcast('add', [entry.name, entry.ref, entry.at] satisfies WireEntry);
  }

  #watch(entry: GlobalEntry): void {
    this.#watches.get(entry.name)?.();
    this.#watches.set(
      entry.name,
      this.#node.system.watch(entry.ref, () => {
        if (sameRef(this.#table.get(entry.name)?.ref, entry.ref)) this.#drop(entry.name, entry, true);
      }),
    );
  }

  /** Removes a name of this node's (announcing it when asked). */
  #drop(name: string, entry: GlobalEntry, announce: boolean): void {
    if (this.#table.get(name) === entry) this.#table.delete(name);
    this.#watches.get(name)?.();
    this.#watches.delete(name);
    if (announce) this.#service.broadcast('remove', name, entry.ref);
  }

  #ownEntries(): WireEntry[] {
    const own: WireEntry[] = [];
    for (const entry of this.#table.values()) if (entry.ref.node === this.#node.name) own.push([entry.name, entry.ref, entry.at]);
    return own;
  }

  /** Monotonic ms, for locks: the system's injected clock. */
  #now(): number {
    return this.#node.system.clock.now();
  }

  /** A peer's own names (hello/sync): what it no longer holds goes; the rest is offered against ours. */
  #merge(from: string, state: unknown, kind: string): void {
    if (!Array.isArray(state)) return;
    const offered = new Set<string>();
    let forged = false;
    for (const item of state) {
      const entry = this.#entryFrom(from, item);
      if (entry === 'forged') forged = true;
      if (typeof entry !== 'object') continue;
      offered.add(entry.name);
      this.#offer(entry);
    }
    if (forged) this.#service.forged(kind, from, 'lists actors of another node');
    for (const [name, entry] of this.#table) if (entry.ref.node === from && !offered.has(name)) this.#table.delete(name);
  }

  /** A peer's entry, checked: its own actor, a valid time; 'forged' (another node's actor) and 'refused' (a bad time) are counted by the caller and here. */
  #entryFrom(from: string, item: unknown): GlobalEntry | 'forged' | 'refused' | undefined {
    if (!Array.isArray(item)) return undefined;
    const [name, ref, at] = item as unknown[];
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_CLUSTER_NAME_LENGTH || !(ref instanceof Ref)) return undefined;
    if (ref.node !== from) return 'forged';
    if (!validTime(at, this.#node.system.clock.wallNow(), this.#driftMs)) {
      this.#refused++;
      if (this.#refused === 1) {
        this.#node.logger.warn({ node: this.#node.name, peer: from, name, at: String(at), maxClockDriftMs: this.#driftMs }, 'nodes.global_time_refused');
      }
      return 'refused';
    }
    return { name, ref, at };
  }

  /** A peer's registration meets ours: the rule picks one; a loser of this node is dropped and told. */
  #offer(entry: GlobalEntry): void {
    if (this.#locks.get(entry.name)?.node === entry.ref.node) this.#locks.delete(entry.name);
    const current = this.#table.get(entry.name);
    if (current === undefined) {
      if (this.#table.size < this.#maxNames) this.#table.set(entry.name, entry);
      return;
    }
    if (sameRef(current.ref, entry.ref)) {
      this.#table.set(entry.name, entry);
      return;
    }
    this.#conflicts++;
    const winner = globalWinner(current, entry);
    const loser = winner === current ? entry : current;
    this.#table.set(entry.name, winner);
    this.#node.logger.warn({ node: this.#node.name, name: entry.name, winner: String(winner.ref), loser: String(loser.ref) }, 'nodes.global_conflict');
    if (loser.ref.node === this.#node.name) {
      this.#watches.get(entry.name)?.();
      this.#watches.delete(entry.name);
      this.#lost++;
      this.#node.system.send(loser.ref, { type: 'global_name_conflict', name: entry.name, winner: winner.ref } satisfies GlobalNameConflict);
      this.#service.broadcast('remove', entry.name, loser.ref);
    }
  }

  #message(kind: string, from: string, body: readonly unknown[]): void {
    if (kind === 'add') {
      const entry = this.#entryFrom(from, body[0]);
      if (entry === 'forged') this.#service.forged(kind, from, 'adds an actor of another node');
      else if (typeof entry === 'object') this.#offer(entry);
    } else if (kind === 'remove' || kind === 'release') {
      const [name, ref] = body;
      if (typeof name !== 'string' || !(ref instanceof Ref)) return;
      // Only the owner's node removes its names and releases its reservations.
      if (ref.node !== from) this.#service.forged(kind, from, `${kind}s an actor of another node`);
      else if (kind === 'remove' && sameRef(this.#table.get(name)?.ref, ref)) this.#table.delete(name);
      else if (kind === 'release' && sameRef(this.#locks.get(name)?.ref, ref)) this.#locks.delete(name);
    } else if (kind === 'unregister') {
      // Any node may ask: the owner (this node) frees its own name and announces it.
      const [name, ref] = body;
      const entry = typeof name === 'string' ? this.#table.get(name) : undefined;
      if (entry !== undefined && sameRef(entry.ref, ref) && entry.ref.node === this.#node.name) this.#drop(entry.name, entry, true);
    }
  }

  #nodedown(peer: string): void {
    for (const [name, entry] of this.#table) if (entry.ref.node === peer) this.#table.delete(name);
    for (const [name, lock] of this.#locks) if (lock.node === peer) this.#locks.delete(name);
  }
}
