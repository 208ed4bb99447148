/**
 * Process groups, like Erlang's `pg`: named groups of actors across the cluster. An actor joins
 * and leaves on its own node; each node tells the others of its members' changes (and its whole
 * membership when a link comes up), so `members(group)` is a local read of the cluster-wide view.
 * Members leave when they exit, and all members of a node leave everywhere when it goes down.
 * Subscribers see every change, local or remote, as `{ type: 'pg_join' | 'pg_leave', group, refs }`.
 * An actor is in a group at most once (joining twice is a no-op). A peer speaks only for its own
 * actors: messages are attributed to their link (peer-service.ts), and refs of other nodes in them
 * are dropped and counted as forgeries.
 */
import { Ref } from '../actors/ref.js';
import { boundedOption as bounded, checkClusterName, checkServiceOptions, ClusterLimitReached, InvalidClusterArgument } from './cluster-errors.js';
import type { Registry } from 'prom-client';
import { clusterMetrics } from './cluster-metrics.js';
import type { Node } from './node.js';
import { PeerService } from './peer-service.js';

export const GROUPS_NAME = 'molo.pg';

/** What a subscriber receives (and `on` listeners are given). */
export interface GroupEvent {
  readonly type: 'pg_join' | 'pg_leave';
  readonly group: string;
  readonly refs: readonly Ref[];
}

export interface GroupsOptions {
  /** Groups known (cluster-wide) on this node; default 10,000, at most 1,000,000. */
  readonly maxGroups?: number;
  /** Members of one group (cluster-wide); default 100,000, at most 10,000,000. */
  readonly maxMembers?: number;
  /** `molo_pg_*` metrics (docs/telemetry.md). */
  readonly registry?: Registry;
}

/** A member's key: its node, id and creation. */
const keyOf = (ref: Ref): string => `${ref.node}/${ref.creation}/${ref.id}`;

type Wire = readonly (readonly [string, readonly Ref[]])[];

const OPTION_KEYS = ['maxGroups', 'maxMembers', 'registry'] as const;

export function startGroups(node: Node, options: GroupsOptions = {}): ProcessGroups {
  return new ProcessGroups(node, options);
}

export class ProcessGroups {
  readonly #node: Node;
  readonly #service: PeerService;
  /** group → member key → ref (every node's members). */
  readonly #groups = new Map<string, Map<string, Ref>>();
  /** Local members' unwatch functions, by key; each watch covers all the member's groups. */
  readonly #watches = new Map<string, () => void>();
  readonly #subscribers = new Map<string, Set<(event: GroupEvent) => void>>();
  readonly #maxGroups: number;
  readonly #maxMembers: number;

  constructor(node: Node, options: GroupsOptions) {
    this.#node = node;
    checkServiceOptions(options, OPTION_KEYS);
    this.#maxGroups = bounded('maxGroups', options.maxGroups, 10_000, 1, 1_000_000);
    this.#maxMembers = bounded('maxMembers', options.maxMembers, 100_000, 1, 10_000_000);
    this.#service = new PeerService(node, { name: GROUPS_NAME, label: 'pg', kinds: ['join', 'leave'] }, {
      snapshot: () => this.#ownMembership(),
      merge: (from, state, kind) => this.#merge(from, state, kind),
      message: (kind, from, body) => this.#message(kind, from, body),
      nodedown: (peer) => this.#removeNode(peer),
    });
    clusterMetrics(options.registry)?.groups.add(this);
  }

  get nodeName(): string {
    return this.#node.name;
  }

  /** Groups and memberships in the cluster-wide view. */
  stats(): { groups: number; members: number } {
    let members = 0;
    for (const group of this.#groups.values()) members += group.size;
    return { groups: this.#groups.size, members };
  }

  /** Peers' messages dropped for speaking for another node or its actors, by kind. */
  forgeries(): Record<string, number> {
    return this.#service.forgeries();
  }

  // ---- the API ----------------------------------------------------------------------------

  /** Adds actors of this node to `group` (announced to every node). */
  join(group: string, refs: Ref | readonly Ref[]): void {
    checkClusterName('group', group);
    const list = this.#localRefs(refs);
    const added = this.#add(group, list, true);
    for (const ref of added) this.#watch(ref);
    if (added.length > 0) this.#service.broadcast('join', group, added);
  }

  /** Removes actors of this node from `group`; false if none of them was in it. */
  leave(group: string, refs: Ref | readonly Ref[]): boolean {
    checkClusterName('group', group);
    const removed = this.#remove(group, this.#localRefs(refs));
    if (removed.length > 0) this.#service.broadcast('leave', group, removed);
    return removed.length > 0;
  }

  /** Members of `group` on every connected node (this one included). */
  members(group: string): Ref[] {
    return [...(this.#groups.get(group)?.values() ?? [])];
  }

  /** Members of `group` on this node. */
  localMembers(group: string): Ref[] {
    return this.members(group).filter((ref) => ref.node === this.#node.name);
  }

  /** Groups with at least one member. */
  groups(): string[] {
    return [...this.#groups.keys()];
  }

  /** Calls `listener` on every join and leave of `group`; returns a function that stops it. */
  on(group: string, listener: (event: GroupEvent) => void): () => void {
    checkClusterName('group', group);
    let set = this.#subscribers.get(group);
    if (set === undefined) this.#subscribers.set(group, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#subscribers.get(group) === set) this.#subscribers.delete(group);
    };
  }

  /** Sends the actor `ref` every GroupEvent of `group`, until it exits or the returned function is called. */
  subscribe(group: string, ref: Ref): () => void {
    const off = this.on(group, (event) => this.#node.system.send(ref, event));
    const unwatch = this.#node.system.watch(ref, () => off());
    return () => {
      off();
      unwatch();
    };
  }

  stop(): void {
    for (const unwatch of this.#watches.values()) unwatch();
    this.#watches.clear();
    this.#service.stop();
  }

  // ---- membership -------------------------------------------------------------------------

  #localRefs(refs: Ref | readonly Ref[]): Ref[] {
    const list = refs instanceof Ref ? [refs] : [...(refs as readonly Ref[])];
    for (const ref of list) {
      if (!(ref instanceof Ref) || ref.node !== this.#node.name) throw new InvalidClusterArgument('group member', 'must be an actor of this node');
    }
    return list;
  }

  /** Adds members; returns those that were not in yet. Caps are enforced on local joins (throw) and peers' (dropped). */
  #add(group: string, refs: readonly Ref[], local: boolean): Ref[] {
    let members = this.#groups.get(group);
    if (members === undefined) {
      if (this.#groups.size >= this.#maxGroups) {
        if (local) throw new ClusterLimitReached('maxGroups', this.#maxGroups);
        return [];
      }
      members = new Map();
    }
    const added: Ref[] = [];
    for (const ref of refs) {
      const key = keyOf(ref);
      if (members.has(key)) continue;
      if (members.size >= this.#maxMembers) {
        if (local) throw new ClusterLimitReached('maxMembers', this.#maxMembers);
        break;
      }
      if (local && !this.#node.system.isAlive(ref)) continue;
      members.set(key, ref);
      added.push(ref);
    }
    if (members.size > 0) this.#groups.set(group, members);
    if (added.length > 0) this.#emit({ type: 'pg_join', group, refs: added });
    return added;
  }

  #remove(group: string, refs: readonly Ref[]): Ref[] {
    const members = this.#groups.get(group);
    if (members === undefined) return [];
    const removed: Ref[] = [];
    for (const ref of refs) {
      const key = keyOf(ref);
      const member = members.get(key);
      if (member === undefined) continue;
      members.delete(key);
      removed.push(member);
    }
    if (members.size === 0) this.#groups.delete(group);
    if (removed.length > 0) this.#emit({ type: 'pg_leave', group, refs: removed });
    return removed;
  }

  /** A local member that exits leaves all its groups. */
  #watch(ref: Ref): void {
    const key = keyOf(ref);
    if (this.#watches.has(key)) return;
    this.#watches.set(
      key,
      this.#node.system.watch(ref, () => {
        this.#watches.delete(key);
        for (const [group, members] of [...this.#groups]) {
          if (members.has(key) && this.#remove(group, [ref]).length > 0) this.#service.broadcast('leave', group, [ref]);
        }
      }),
    );
  }

  #emit(event: GroupEvent): void {
    for (const listener of [...(this.#subscribers.get(event.group) ?? [])]) {
      try {
        listener(event);
      } catch (error) {
        this.#node.logger.error({ err: error, node: this.#node.name, group: event.group }, 'a group listener threw');
      }
    }
  }

  #ownMembership(): Wire {
    const own: [string, Ref[]][] = [];
    for (const group of this.#groups.keys()) {
      const local = this.localMembers(group);
      if (local.length > 0) own.push([group, local]);
    }
    return own;
  }

  /** A peer's refs, only its own actors (a peer speaks for its own node); `forged` is set when it named others. */
  #peerRefs(from: string, value: unknown, forged: { found: boolean }): Ref[] {
    if (!Array.isArray(value)) return [];
    const refs = value.filter((ref): ref is Ref => ref instanceof Ref);
    const own = refs.filter((ref) => ref.node === from);
    if (own.length !== refs.length) forged.found = true;
    return own;
  }

  /** A peer's whole membership (hello/sync): its members not in it leave, the others join. */
  #merge(from: string, state: unknown, kind: string): void {
    if (!Array.isArray(state)) return;
    const seen = new Set<string>();
    const forged = { found: false };
    for (const item of state) {
      if (!Array.isArray(item) || typeof item[0] !== 'string' || item[0].length === 0 || item[0].length > 256) continue;
      const refs = this.#peerRefs(from, item[1], forged);
      for (const ref of refs) seen.add(`${item[0]}\u0000${keyOf(ref)}`);
      this.#add(item[0], refs, false);
    }
    for (const [group, members] of [...this.#groups]) {
      const gone = [...members.values()].filter((ref) => ref.node === from && !seen.has(`${group}\u0000${keyOf(ref)}`));
      if (gone.length > 0) this.#remove(group, gone);
    }
    if (forged.found) this.#service.forged(kind, from, 'lists actors of another node');
  }

  #message(kind: string, from: string, body: readonly unknown[]): void {
    const [group, refs] = body;
    if ((kind !== 'join' && kind !== 'leave') || typeof group !== 'string' || group.length === 0 || group.length > 256) return;
    const forged = { found: false };
    const own = this.#peerRefs(from, refs, forged);
    if (forged.found) this.#service.forged(kind, from, `${kind}s actors of another node`);
    if (kind === 'join') this.#add(group, own, false);
    else this.#remove(group, own);
  }

  #removeNode(peer: string): void {
    for (const [group, members] of [...this.#groups]) {
      const gone = [...members.values()].filter((ref) => ref.node === peer);
      if (gone.length > 0) this.#remove(group, gone);
    }
  }
}
