/**
 * The transport side of replication (S7-7, S7-10): every node that runs it serves its own oplog to
 * its peers and applies theirs, over the node links. Per connected peer that runs replication too,
 * two supervised replicators: `pull:<peer>` (the peer's changes in: pushed, or pulled by sequence
 * from the persisted cursor) and `push:<peer>` (this node's commits out). Both live under one
 * `one_for_one` supervisor, which `childSpec()` puts in the application's tree (or `start()` runs
 * on its own), so they show in the admin tree with their lag.
 *
 * Attribution: a batch's origin is the link it arrived on (peer-service.ts), never a field of the
 * payload; the sink refuses entries whose instance is not that origin, so a peer speaks only for its
 * own writes. Each node serves only its own entries: replication is a full mesh between the nodes
 * that run it (what A got from B, A does not forward to C; C pulls from B).
 */
import type { ActorRuntime, Ref } from '../../actors/index.js';
import type { ChildSpec, SupervisorSpec } from '../../behaviours/index.js';
import { GenServer, Supervisor } from '../../behaviours/index.js';
import { OplogBehindRetention } from '../../data/replication/errors.js';
import { boundedOption } from '../cluster-errors.js';
import type { Node } from '../node.js';
import { PeerService } from '../peer-service.js';
import { replicationMetrics } from './metrics.js';
import { resolveReplicationOptions, type ReplicationOptions, type ResolvedReplicationOptions } from './options.js';
import { PullReplicator, type PullInfo, type PullStatus } from './pull-replicator.js';
import { PushReplicator } from './push-replicator.js';
import { checkCursor, checkEntries, checkSeq, REPLICATION_KINDS, REPLICATION_SERVICE, WIRE_BATCH_CAPS, type PullAnswer } from './wire.js';

/** Pulls and snapshot pages one peer may have this node serve at once; more are answered `BUSY`. */
export const MAX_SERVED_PER_PEER = 4;

export interface ReplicationStats {
  /** Per peer: the pull side's status (cursor, head, lag, state). */
  readonly peers: readonly PullStatus[];
  /** Peers' messages dropped as malformed, and as forgeries by kind. */
  readonly malformed: number;
  readonly forged: Record<string, number>;
}

export class Replication {
  readonly #node: Node;
  readonly #options: ResolvedReplicationOptions;
  readonly #service: PeerService;
  readonly #status = new Map<string, PullStatus>();
  readonly #routes = new Map<string, Ref>();
  readonly #serving = new Map<string, number>();
  /** Peers that said hello: they run replication, so replicators run for them. */
  readonly #peers = new Set<string>();
  /** Per peer, the start or stop of its replicators in flight: one after the other. */
  readonly #chains = new Map<string, Promise<void>>();
  #supervisor: Ref | undefined;
  #malformed = 0;

  constructor(node: Node, options: ReplicationOptions) {
    this.#node = node;
    this.#options = resolveReplicationOptions(node.name, options);
    this.#service = new PeerService(node, { name: REPLICATION_SERVICE, label: 'replication', kinds: REPLICATION_KINDS }, {
      snapshot: () => null,
      merge: (peer) => this.#peerUp(peer),
      message: (kind, from, body) => this.#received(kind, from, body),
      nodedown: (peer) => this.#peerDown(peer),
      call: (kind, from, body) => this.#serve(kind, from, body),
    });
    replicationMetrics(this.#options.metrics)?.services.add(this);
  }

  /** Runs the replicators' supervisor on its own (not linked to a tree); stop it with `stop()`. */
  static async start(node: Node, options: ReplicationOptions): Promise<Replication> {
    const replication = new Replication(node, options);
    replication.#attach(await Supervisor.start(node.system, replication.#supervisorSpec()));
    return replication;
  }

  /**
   * A child spec that puts the replicators' supervisor in the application's tree. The service
   * (what peers talk to) is created now; the replicators start with the child, and again with it
   * after a restart.
   */
  static childSpec(node: Node, options: ReplicationOptions & { readonly id?: string }): ChildSpec & { readonly replication: Replication } {
    const { id = 'replication', ...rest } = options;
    const replication = new Replication(node, rest);
    const spec: ChildSpec = {
      id,
      type: 'supervisor',
      start: async ({ system, parent }) => replication.#attach(await Supervisor.start(system, replication.#supervisorSpec(), { link: parent })),
    };
    // Not enumerable: it rides along for the caller, it is not a child-spec key (those are checked).
    return Object.defineProperty(spec, 'replication', { value: replication, enumerable: false }) as ChildSpec & { readonly replication: Replication };
  }

  get nodeName(): string {
    return this.#node.name;
  }

  get supervisor(): Ref | undefined {
    return this.#supervisor;
  }

  get lagAlertEntries(): number {
    return this.#options.lagAlertEntries;
  }

  stats(): ReplicationStats {
    return { peers: [...this.#status.values()], malformed: this.#malformed, forged: this.#service.forgeries() };
  }

  /** Entries behind `peer` (its head less what is applied here); undefined for a peer not replicated with. */
  lag(peer: string): number | undefined {
    return this.#status.get(peer)?.lag;
  }

  /** For the admin's `healthChecks`: `/health` degrades while a peer is more than `lagAlertEntries` behind, naming it. */
  healthCheck(): { readonly name: string; problems(): string[] } {
    return { name: 'replication', problems: () => this.healthProblems() };
  }

  /** Each peer more than `lagAlertEntries` behind, named. */
  healthProblems(): string[] {
    return [...this.#status.values()]
      .filter((status) => status.lag > this.#options.lagAlertEntries)
      .map((status) => `replication from ${status.peer} is ${status.lag} entries behind (alert above ${this.#options.lagAlertEntries})`);
  }

  /** Resolves once every replicated peer's cursor reached the head it last announced (or rejects after `timeoutMs`). */
  async caughtUp(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + boundedOption('caughtUp.timeoutMs', timeoutMs, 10_000, 1, 600_000);
    while ([...this.#status.values()].some((status) => status.lag > 0 || status.state === 'starting' || status.state === 'catching-up')) {
      if (Date.now() > deadline) throw new Error(`replication not caught up after ${timeoutMs} ms: ${JSON.stringify(this.stats().peers)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async stop(): Promise<void> {
    this.#service.stop();
    replicationMetrics(this.#options.metrics)?.services.delete(this);
    const supervisor = this.#supervisor;
    this.#supervisor = undefined;
    if (supervisor !== undefined && this.#node.system.isAlive(supervisor)) await Supervisor.stop(this.#node.system, supervisor, 'shutdown');
  }

  #supervisorSpec(): SupervisorSpec {
    return { strategy: 'one_for_one', intensity: 10, periodMs: 10_000, children: [] };
  }

  #attach(supervisor: Ref): Ref {
    this.#supervisor = supervisor;
    for (const peer of this.#peers) this.#chain(peer, () => this.#startReplicators(peer));
    return supervisor;
  }

  #peerUp(peer: string): void {
    if (this.#peers.has(peer) || !this.#options.peers(peer)) return;
    this.#peers.add(peer);
    this.#chain(peer, () => this.#startReplicators(peer));
  }

  #peerDown(peer: string): void {
    if (!this.#peers.delete(peer)) return;
    this.#chain(peer, () => this.#stopReplicators(peer));
  }

  #chain(peer: string, step: () => Promise<void>): void {
    const next = (this.#chains.get(peer) ?? Promise.resolve()).then(step).catch((error: unknown) => {
      this.#node.logger.warn({ node: this.#node.name, peer, err: error }, 'replication.replicator_start_failed');
    });
    this.#chains.set(peer, next);
    void next.then(() => {
      if (this.#chains.get(peer) === next) this.#chains.delete(peer);
    });
  }

  async #startReplicators(peer: string): Promise<void> {
    const supervisor = this.#supervisor;
    if (supervisor === undefined || !this.#peers.has(peer) || !this.#node.system.isAlive(supervisor)) return;
    const system = this.#node.system;
    const report = (status: PullStatus, ref: unknown): void => {
      // A late report from a replicator of a peer that went down meanwhile is not kept.
      if (!this.#peers.has(peer)) return;
      this.#status.set(peer, status);
      this.#routes.set(peer, ref as Ref);
    };
    const specs: ChildSpec[] = [
      { id: `pull:${peer}`, start: ({ parent }) => GenServer.start(system, () => new PullReplicator(peer, this.#service, this.#options, report), { link: parent }) },
      { id: `push:${peer}`, start: ({ parent }) => GenServer.start(system, () => new PushReplicator(peer, this.#service, this.#options), { link: parent }) },
    ];
    for (const spec of specs) await Supervisor.startChild(system, supervisor, spec);
  }

  async #stopReplicators(peer: string): Promise<void> {
    this.#status.delete(peer);
    this.#routes.delete(peer);
    const supervisor = this.#supervisor;
    if (supervisor === undefined || !this.#node.system.isAlive(supervisor)) return;
    for (const id of [`pull:${peer}`, `push:${peer}`]) {
      try {
        await Supervisor.terminateChild(this.#node.system, supervisor, id);
        await Supervisor.deleteChild(this.#node.system, supervisor, id);
      } catch {
        // Not started (the peer went down before its start ran): nothing to stop.
      }
    }
  }

  #received(kind: string, from: string, body: readonly unknown[]): void {
    const route = this.#routes.get(from);
    let message: PullInfo | undefined;
    if (kind === 'push') {
      const entries = checkEntries(body[0]);
      const head = checkSeq(body[1]);
      if (entries !== undefined && head !== undefined) message = { kind: 'push', entries, head };
    } else if (kind === 'wake') {
      const head = checkSeq(body[0]);
      if (head !== undefined) message = { kind: 'wake', head };
    }
    if (message === undefined) {
      this.#malformed++;
      return;
    }
    if (route === undefined) return; // Not replicating with it (yet): its pull on start covers this.
    try {
      this.#node.system.send(route, message);
    } catch {
      // The replicator's mailbox is full: it is behind anyway, and its pull covers what this push carried.
    }
  }

  #serve(kind: string, from: string, body: readonly unknown[]): Promise<unknown> | unknown {
    if (!this.#peers.has(from)) return { failed: 'NOT_REPLICATING' };
    const busy = this.#serving.get(from) ?? 0;
    if (busy >= MAX_SERVED_PER_PEER) return { failed: 'BUSY' };
    let work: Promise<unknown>;
    if (kind === 'pull') {
      const afterSeq = checkSeq(body[0]);
      if (afterSeq === undefined) return { failed: 'MALFORMED' };
      work = this.#pull(afterSeq);
    } else if (kind === 'snapshot') {
      const afterKey = checkCursor(body[0]);
      if (afterKey === undefined) return { failed: 'MALFORMED' };
      // Only rows this node wrote last: a peer speaks only for its own writes, and rows others wrote
      // last reach the receiver from those others (a full mesh), so a resync never relays them.
      const instance = this.#options.source.instance;
      work = this.#options.source.snapshot(afterKey, WIRE_BATCH_CAPS).then((page) => ({ ...page, entries: page.entries.filter((entry) => entry.instance === instance) }));
    } else return { failed: 'UNKNOWN' };
    this.#serving.set(from, busy + 1);
    return work.finally(() => this.#serving.set(from, (this.#serving.get(from) ?? 1) - 1));
  }

  async #pull(afterSeq: number): Promise<PullAnswer> {
    const source = this.#options.source;
    try {
      const entries = await source.read(afterSeq, WIRE_BATCH_CAPS);
      return { entries, head: entries.length > 0 ? Math.max(entries.at(-1)!.seq, await source.highWater()) : await source.highWater() };
    } catch (error) {
      if (error instanceof OplogBehindRetention) return { behind: error.oldestSeq, head: await source.highWater() };
      throw error;
    }
  }
}

/**
 * The admin tree's view of replicators (the shape of the admin layer's `SnapshotProvider`, which
 * this layer may not import): each pull replicator's state, cursor, head and lag, and each push
 * replicator's progress, in `sections.replication`. Part of every application node's snapshot.
 */
export function replicationProviders(): { readonly behaviour: string; readonly section: string; describe(system: ActorRuntime, ref: Ref): Promise<unknown>; readonly descend: boolean }[] {
  const describe = (system: ActorRuntime, ref: Ref): Promise<unknown> => GenServer.call(system, ref, 'status');
  return [PullReplicator.name, PushReplicator.name].map((behaviour) => ({ behaviour, section: 'replication', describe, descend: false }));
}
