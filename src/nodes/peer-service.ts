/**
 * The plumbing shared by the cluster services (global registry, process groups, cluster topics):
 * one actor per node, registered under the service's name, that peers address by name over their
 * link. When a link comes up (or the service starts while links are up) each side sends `hello`
 * with its state, answered by `sync` with the other's: a service that started after the link came
 * up still exchanges state, since its own start says hello. Every message names the node it is
 * from, and a peer speaks only for its own actors (services check that).
 */
import { CallRequest } from '../actors/messages.js';
import type { DownReason } from './link.js';
import type { Node } from './node.js';

/** What a service's actor receives from peers: `[kind, fromNode, ...body]`. */
export type PeerMessage = readonly [string, string, ...unknown[]];

export interface PeerServiceHandlers {
  /** This node's part of the state, sent to a peer in `hello` and `sync`. */
  snapshot(): unknown;
  /** A peer's state, from its hello or sync. */
  merge(from: string, state: unknown): void;
  /** Any other message from a peer. */
  message(kind: string, from: string, body: readonly unknown[]): void;
  nodedown(peer: string, reason: DownReason): void;
  /** A call from a peer (`[kind, fromNode, ...body]`); the result is the reply. */
  call?(kind: string, from: string, body: readonly unknown[]): unknown;
}

export class PeerService {
  readonly #node: Node;
  readonly #name: string;
  readonly #off: (() => void)[] = [];
  #stopped = false;

  constructor(node: Node, name: string, handlers: PeerServiceHandlers) {
    this.#node = node;
    this.#name = name;
    const system = node.system;
    system.spawn(
      (raw: unknown) => {
        if (raw instanceof CallRequest) {
          const request = raw.request as unknown[];
          const valid = !this.#stopped && Array.isArray(request) && typeof request[0] === 'string' && typeof request[1] === 'string';
          raw.reply(valid && handlers.call !== undefined ? handlers.call(request[0] as string, request[1] as string, request.slice(2)) : null);
          return;
        }
        if (this.#stopped || !Array.isArray(raw) || typeof raw[0] !== 'string' || typeof raw[1] !== 'string') return;
        const [kind, from, ...body] = raw as unknown as PeerMessage;
        if (!node.isConnected(from)) return;
        if (kind === 'hello' || kind === 'sync') {
          handlers.merge(from, body[0]);
          if (kind === 'hello') this.sendTo(from, 'sync', handlers.snapshot());
        } else {
          handlers.message(kind, from, body);
        }
      },
      { name },
    );
    this.#off.push(
      node.on('nodeup', (peer) => this.sendTo(peer, 'hello', handlers.snapshot())),
      node.on('nodedown', (peer, reason) => handlers.nodedown(peer, reason)),
    );
    for (const peer of node.nodes()) this.sendTo(peer, 'hello', handlers.snapshot());
  }

  get node(): Node {
    return this.#node;
  }

  sendTo(peer: string, kind: string, ...body: unknown[]): void {
    if (!this.#stopped) this.#node.sendNamed(this.#name, peer, [kind, this.#node.name, ...body]);
  }

  /** Calls this service on `peer` (NodeDown if not connected). */
  call(peer: string, kind: string, body: readonly unknown[], timeoutMs: number): Promise<unknown> {
    return this.#node.callNamed(this.#name, peer, [kind, this.#node.name, ...body], timeoutMs);
  }

  broadcast(kind: string, ...body: unknown[]): void {
    for (const peer of this.#node.nodes()) this.sendTo(peer, kind, ...body);
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const off of this.#off) off();
    const ref = this.#node.system.whereis(this.#name);
    if (ref !== undefined && !this.#node.system.stopped) this.#node.system.exit(ref, 'shutdown');
  }
}
