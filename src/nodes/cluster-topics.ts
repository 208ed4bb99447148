/**
 * Cluster-wide topics: a bridge between a node's topic broker (src/bus/topics) and the other
 * nodes'. `publish` publishes on the local broker and sends the message once to every connected
 * node, whose bridge publishes it on its own broker, to its local subscribers only. A message
 * received from a peer is never forwarded again, so there are no loops and each node sees a
 * publish once (in a full mesh). Publishes made on the broker directly stay local.
 *
 * Bounded: the local publish checks channel and payload against the broker's caps before anything
 * travels; each link's send queue is bounded (`sendQueueBytes`, its `fullPolicy` applies: at most
 * once, as topics are); each subscriber's queue is bounded by its broker. Messages from a peer are
 * checked again by the receiving broker, and dropped (counted) if they break its caps. A message
 * that names another node than its link's as its sender is dropped and counted (peer-service.ts).
 */
import type { Broker, PublishOptions } from '../bus/topics/broker.js';
import { encodeJson } from '../bus/topics/message.js';
import type { Registry } from 'prom-client';
import { checkServiceOptions } from './cluster-errors.js';
import { clusterMetrics } from './cluster-metrics.js';
import type { Node } from './node.js';
import { PeerService } from './peer-service.js';

export const TOPICS_NAME = 'molo.topics';

export interface ClusterTopicStats {
  /** Publishes made here through the bridge. */
  readonly published: number;
  /** Copies sent to peers (one per connected node per publish). */
  readonly forwarded: number;
  /** Messages received from peers and published here. */
  readonly received: number;
  /** Messages from peers the local broker refused (a cap, a closed broker): dropped. */
  readonly rejected: number;
}

/** Bridges `broker` to the brokers of every node that runs it too. */
export function startClusterTopics(node: Node, broker: Broker, options: { readonly registry?: Registry } = {}): ClusterTopics {
  return new ClusterTopics(node, broker, options);
}

export class ClusterTopics {
  readonly #node: Node;
  readonly #broker: Broker;
  readonly #service: PeerService;
  readonly #counts = { published: 0, forwarded: 0, received: 0, rejected: 0 };

  constructor(node: Node, broker: Broker, options: { readonly registry?: Registry } = {}) {
    this.#node = node;
    this.#broker = broker;
    checkServiceOptions(options, ['registry']);
    this.#service = new PeerService(node, { name: TOPICS_NAME, label: 'topics', kinds: ['pub'] }, {
      snapshot: () => null,
      merge: () => {},
      message: (kind, from, body) => {
        if (kind === 'pub') this.#received(from, body);
      },
      nodedown: () => {},
    });
    clusterMetrics(options.registry)?.topics.add(this);
  }

  get nodeName(): string {
    return this.#node.name;
  }

  get broker(): Broker {
    return this.#broker;
  }

  /**
   * Publishes on this node's broker and on every connected node's; returns how many local
   * subscriptions it was queued for (the broker's answer). Throws what the broker throws
   * (TopicPayloadTooLarge, InvalidTopicChannel, BrokerClosed) before anything is sent.
   */
  publish(channel: string, payload: Uint8Array, options?: PublishOptions): number {
    const local = this.#broker.publish(channel, payload, options);
    this.#counts.published++;
    const peers = this.#node.nodes();
    for (const peer of peers) this.#service.sendTo(peer, 'pub', channel, payload, options?.contentType ?? null);
    this.#counts.forwarded += peers.length;
    return local;
  }

  /** publish of `value` as JSON (`application/json`), read by subscribers with `message.json()`. */
  publishJson(channel: string, value: unknown, options?: PublishOptions): number {
    const encoded = encodeJson(value);
    return this.publish(channel, encoded.payload, { contentType: options?.contentType ?? encoded.contentType });
  }

  stats(): ClusterTopicStats {
    return { ...this.#counts };
  }

  /** Peers' messages dropped for naming another node as their sender, by kind. */
  forgeries(): Record<string, number> {
    return this.#service.forgeries();
  }

  stop(): void {
    this.#service.stop();
  }

  #received(from: string, body: readonly unknown[]): void {
    const [channel, payload, contentType] = body;
    try {
      if (typeof channel !== 'string' || !(payload instanceof Uint8Array)) throw new TypeError('malformed cluster topic message');
      this.#broker.publish(channel, payload, typeof contentType === 'string' ? { contentType } : undefined);
      this.#counts.received++;
    } catch (error) {
      this.#counts.rejected++;
      if (this.#counts.rejected <= 10) this.#node.logger.warn({ err: error, node: this.#node.name, peer: from }, 'nodes.topic_rejected');
    }
  }
}
