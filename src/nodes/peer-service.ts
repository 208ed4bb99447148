/**
 * The plumbing shared by the cluster services (global registry, process groups, cluster topics):
 * one actor per node, registered under the service's name, that peers address by name over their
 * link. When a link comes up (or the service starts while links are up) each side sends `hello`
 * with its state, answered by `sync` with the other's: a service that started after the link came
 * up still exchanges state, since its own start says hello.
 *
 * A message is attributed to the link it arrived on, never to the node it names: the actor is
 * attributed (peer-attribution.ts), so the link's router hands it every peer message wrapped with
 * the link's node. Messages still carry their sender's name (`[kind, fromNode, ...body]`); one whose
 * name is not its link's node is a forgery: dropped, counted by kind, logged once per kind. Anything
 * that did not come over a link is ignored. Services check that a peer speaks only for its own
 * actors, and report what does not through {@link PeerService.forged}.
 *
 * The actor is a permanent child of the node's cluster services supervisor (`molo.cluster_sup`):
 * killed, it is started again under the same name, attributed again, and says hello to every peer,
 * whose sync answers bring it up to date. Its state lives in the service, so nothing is lost.
 */
import { NameTaken } from '../actors/errors.js';
import { CallRequest } from '../actors/messages.js';
import type { Ref } from '../actors/ref.js';
import { Supervisor } from '../behaviours/supervisor.js';
import type { DownReason } from './link.js';
import type { Node } from './node.js';
import { FromPeer } from './peer-attribution.js';

/** What a service's actor receives from peers: `[kind, fromNode, ...body]`. */
export type PeerMessage = readonly [string, string, ...unknown[]];

export interface PeerServiceHandlers {
  /** This node's part of the state, sent to a peer in `hello` and `sync`. */
  snapshot(): unknown;
  /** A peer's state, from its hello or sync; `kind` is which. */
  merge(from: string, state: unknown, kind: 'hello' | 'sync'): void;
  /** Any other message from a peer. */
  message(kind: string, from: string, body: readonly unknown[]): void;
  nodedown(peer: string, reason: DownReason): void;
  /** A call from a peer (`[kind, fromNode, ...body]`); the result (or what its promise resolves to) is the reply. */
  call?(kind: string, from: string, body: readonly unknown[]): unknown;
}

export interface PeerServiceSpec {
  /** The name the service's actor is registered under (the same on every node). */
  readonly name: string;
  /** Short label of the service in logs and metrics (`global`, `pg`, `topics`). */
  readonly label: string;
  /** The message kinds the service speaks: forgeries are counted under these, any other as `other`. */
  readonly kinds: readonly string[];
}

/** Service names taken on each node, from a service's construction until its stop. */
const claimedNames = new WeakMap<Node, Set<string>>();
/** Per node and service label: the last stop's removal of its child, which a new service of that label waits for. */
const removals = new WeakMap<Node, Map<string, Promise<void>>>();

export class PeerService {
  readonly #node: Node;
  readonly #spec: PeerServiceSpec;
  readonly #kinds: ReadonlySet<string>;
  readonly #forged = new Map<string, number>();
  readonly #off: (() => void)[] = [];
  readonly #handlers: PeerServiceHandlers;
  #unattribute: (() => void) | undefined;
  #stopped = false;

  constructor(node: Node, spec: PeerServiceSpec, handlers: PeerServiceHandlers) {
    this.#node = node;
    this.#spec = spec;
    this.#handlers = handlers;
    this.#kinds = new Set(['hello', 'sync', ...spec.kinds]);
    // Claimed synchronously, as a spawn under the name would be: a second service of a kind on one node is an error now, not later.
    // (Not by the registry: the actor of a service stopped a moment ago may still hold the name while its supervisor stops it.)
    const claimed = claimedNames.get(node) ?? new Set<string>();
    claimedNames.set(node, claimed);
    if (claimed.has(spec.name)) throw new NameTaken(spec.name, node.system.whereis(spec.name) ?? node.services);
    claimed.add(spec.name);
    this.#off.push(
      node.on('nodeup', (peer) => this.sendTo(peer, 'hello', handlers.snapshot())),
      node.on('nodedown', (peer, reason) => handlers.nodedown(peer, reason)),
    );
    const removed = removals.get(node)?.get(spec.label) ?? Promise.resolve();
    this.started = removed
      .then(() => Supervisor.startChild(node.system, node.services, { id: spec.label, restart: 'permanent', start: ({ parent }) => this.#spawn(parent) }))
      .then(
        () => undefined,
        (error: unknown) => node.logger.warn({ node: node.name, service: spec.label, err: error }, 'nodes.cluster_service_start_failed'),
      );
  }

  /** Settles once the service's actor runs under the cluster services supervisor. */
  readonly started: Promise<void>;

  /** Starts (and, after a crash, restarts) the service's actor: registered, attributed, and saying hello to every peer. */
  #spawn(parent: Ref): Ref | undefined {
    if (this.#stopped) return undefined;
    this.#unattribute?.();
    const handlers = this.#handlers;
    const ref = this.#node.system.spawn(
      (raw: unknown) => {
        if (raw instanceof CallRequest) {
          const answer = this.#call(raw.request, handlers);
          // An answer that needs I/O (an oplog read) replies when it settles; a failure replies as a value, never crashes the service.
          if (answer instanceof Promise) answer.then((value: unknown) => raw.reply(value ?? null), (error: unknown) => raw.reply({ failed: errorCodeOf(error) }));
          else raw.reply(answer ?? null);
        }
        else if (raw instanceof FromPeer) this.#receive(raw.peer, raw.message, handlers);
      },
      { name: this.#spec.name, link: parent },
    );
    this.#unattribute = this.#node.attribution.add(ref);
    for (const peer of this.#node.nodes()) this.sendTo(peer, 'hello', handlers.snapshot());
    return ref;
  }

  get node(): Node {
    return this.#node;
  }

  get label(): string {
    return this.#spec.label;
  }

  sendTo(peer: string, kind: string, ...body: unknown[]): void {
    if (!this.#stopped) this.#node.sendNamed(this.#spec.name, peer, [kind, this.#node.name, ...body]);
  }

  /** Calls this service on `peer` (NodeDown if not connected). */
  call(peer: string, kind: string, body: readonly unknown[], timeoutMs: number): Promise<unknown> {
    return this.#node.callNamed(this.#spec.name, peer, [kind, this.#node.name, ...body], timeoutMs);
  }

  broadcast(kind: string, ...body: unknown[]): void {
    for (const peer of this.#node.nodes()) this.sendTo(peer, kind, ...body);
  }

  /**
   * A message from `peer` that speaks for what is not its own (another node's name in it, another
   * node's actors): counted by kind; the first of each kind is logged at warn.
   */
  forged(kind: string, peer: string, detail: string): void {
    const label = this.#kinds.has(kind) ? kind : 'other';
    const count = (this.#forged.get(label) ?? 0) + 1;
    this.#forged.set(label, count);
    if (count === 1) {
      this.#node.logger.warn({ node: this.#node.name, service: this.#spec.label, peer, kind: label, detail }, 'nodes.cluster_forged');
    }
  }

  /** Forged messages dropped, by kind. */
  forgeries(): Record<string, number> {
    return Object.fromEntries(this.#forged);
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const off of this.#off) off();
    this.#unattribute?.();
    claimedNames.get(this.#node)?.delete(this.#spec.name);
    const { system, services } = this.#node;
    if (system.stopped) return;
    // The supervisor stops the actor (a permanent child stopped by its supervisor is not restarted), then forgets it.
    const removed = this.started
      .then(() => Supervisor.terminateChild(system, services, this.#spec.label))
      .then(() => Supervisor.deleteChild(system, services, this.#spec.label))
      .catch(() => undefined);
    const byLabel = removals.get(this.#node) ?? new Map<string, Promise<void>>();
    removals.set(this.#node, byLabel);
    byLabel.set(this.#spec.label, removed);
  }

  /** The message's kind and body when it is well-formed and names its own link's node; undefined otherwise (a forgery counted). */
  #open(peer: string, message: unknown): [kind: string, body: unknown[]] | undefined {
    if (this.#stopped || !Array.isArray(message) || typeof message[0] !== 'string') return undefined;
    const [kind, claimed, ...body] = message as unknown[];
    if (claimed !== peer) {
      this.forged(kind as string, peer, `names ${typeof claimed === 'string' ? claimed.slice(0, 300) : typeof claimed} as its sender`);
      return undefined;
    }
    return [kind as string, body];
  }

  #receive(peer: string, message: unknown, handlers: PeerServiceHandlers): void {
    // A message that overtook its link's nodedown (or arrived after it): the peer's state is gone here.
    if (!this.#node.isConnected(peer)) return;
    const opened = this.#open(peer, message);
    if (opened === undefined) return;
    const [kind, body] = opened;
    if (kind === 'hello' || kind === 'sync') {
      handlers.merge(peer, body[0], kind);
      if (kind === 'hello') this.sendTo(peer, 'sync', handlers.snapshot());
    } else {
      handlers.message(kind, peer, body);
    }
  }

  #call(request: unknown, handlers: PeerServiceHandlers): unknown {
    // Only peers call a service; a local call (not attributed) has no sender to speak for.
    if (!(request instanceof FromPeer)) return null;
    const opened = this.#open(request.peer, request.message);
    if (opened === undefined || handlers.call === undefined) return null;
    return handlers.call(opened[0], request.peer, opened[1]);
  }
}

/** What a peer learns of a failed answer: the stable code only, never a stack or message of this node. */
function errorCodeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code.slice(0, 100) : 'ERROR';
}
