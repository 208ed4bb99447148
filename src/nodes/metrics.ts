/**
 * The nodes' Prometheus metrics, read from `node.stats()` and `node.links()` at scrape time, so a
 * node without a registry pays nothing. Labelled by `node` (the local node's name):
 * `molo_node_links_up`, `molo_node_queued_bytes{peer}`, counters `molo_node_handshakes_total`,
 * `molo_node_handshakes_refused_total{reason}`, `molo_node_frames_dropped_total{reason}`
 * (`malformed`, `too_large`, `unknown_actor`, `queue_full`, `unconnected`), `molo_node_links_down_total`,
 * `molo_node_bytes_sent_total`, `molo_node_bytes_received_total`; auto-connect:
 * `molo_node_auto_connect_total{reason}` (`attempt`, `connected`, `failed`, `limited`, `backed_off`,
 * `pending_full`), `molo_node_auto_connect_flushed_total`, `molo_node_auto_connect_pending_bytes`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { perNodeMetric } from './per-node-metric.js';
import type { NodeStats } from './stats.js';

/** What the metrics read of a node. */
export interface MeteredNode {
  readonly name: string;
  readonly stopped: boolean;
  stats(): NodeStats;
  links(): { node: string; queuedBytes: number }[];
}

export class NodeMetrics {
  readonly #nodes = new Set<MeteredNode>();

  constructor(registry: Registry, prefix = 'molo_') {
    const registers = [registry];
    const nodes = this.#nodes;
    const live = (): MeteredNode[] => [...nodes].filter((node) => !node.stopped);
    // Counters keep a stopped node's totals; gauges show only nodes still running.
    const counter = (name: string, help: string, read: (stats: NodeStats) => number): void =>
      perNodeMetric(Counter, registers, `${prefix}${name}`, help, () => [...nodes].map((node) => [node.name, read(node.stats())] as const));
    const gauge = (name: string, help: string, read: (stats: NodeStats) => number): void =>
      perNodeMetric(Gauge, registers, `${prefix}${name}`, help, () => live().map((node) => [node.name, read(node.stats())] as const));
    gauge('node_links_up', 'Authenticated links to other nodes, up now.', (stats) => stats.linksUp);
    new Gauge({
      name: `${prefix}node_queued_bytes`,
      help: 'Bytes queued on a link: sent and unacknowledged by the peer, or waiting for its credit.',
      labelNames: ['node', 'peer'],
      registers,
      collect() {
        this.reset();
        for (const node of live()) for (const link of node.links()) this.set({ node: node.name, peer: link.node }, link.queuedBytes);
      },
    });
    gauge('node_auto_connect_pending_bytes', 'Bytes of traffic held for nodes being auto-connected, now.', (stats) => stats.autoConnect.pendingBytes);
    counter('node_auto_connect_flushed_total', 'Frames held while auto-connecting, sent once the node came up.', (stats) => stats.autoConnect.flushed);
    counter('node_handshakes_total', 'Handshakes completed (links up).', (stats) => stats.handshakesCompleted);
    counter('node_links_down_total', 'Links that went down.', (stats) => stats.linksDown);
    counter('node_bytes_sent_total', 'Bytes written to links after their handshake.', (stats) => stats.bytesSent);
    counter('node_bytes_received_total', 'Bytes read from links after their handshake.', (stats) => stats.bytesReceived);
    const byReason = (name: string, help: string, read: (stats: NodeStats) => Iterable<[string, number]>): void => {
      new Counter({
        name: `${prefix}${name}`,
        help,
        labelNames: ['node', 'reason'],
        registers,
        collect() {
          this.reset();
          for (const node of nodes) for (const [reason, count] of read(node.stats())) this.inc({ node: node.name, reason }, count);
        },
      });
    };
    byReason('node_handshakes_refused_total', 'Handshakes refused (by either side), by reason.', (stats) =>
      Object.entries(stats.handshakesRefused).map(([reason, count]): [string, number] => [reason, count ?? 0]),
    );
    byReason('node_frames_dropped_total', 'Frames or messages dropped, by reason.', (stats) => [
      ['malformed', stats.framesDropped],
      ['too_large', stats.framesTooLarge],
      ['unknown_actor', stats.unknownActors],
      ['queue_full', stats.queueFull],
      ['unconnected', stats.unconnectedSends],
    ]);
    byReason('node_auto_connect_total', 'Auto-connect events: attempts and their outcomes, traffic refused by the cap, the backoff or a full pending buffer.', ({ autoConnect: a }) => [
      ['attempt', a.attempts],
      ['connected', a.connected],
      ['failed', a.failed],
      ['limited', a.limited],
      ['backed_off', a.backedOff],
      ['pending_full', a.pendingFull],
    ]);
  }

  add(node: MeteredNode): void {
    this.#nodes.add(node);
  }
}

const byRegistry = new WeakMap<Registry, NodeMetrics>();

/** The node metrics of `registry`, created on first use; undefined without a registry. */
export function nodeMetrics(registry: Registry | undefined): NodeMetrics | undefined {
  if (registry === undefined) return undefined;
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) byRegistry.set(registry, (metrics = new NodeMetrics(registry)));
  return metrics;
}
