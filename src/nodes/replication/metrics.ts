/**
 * Metrics of the replication transport, read from each service's table at scrape time (nothing per
 * entry): `molo_replication_lag_entries{node,peer}` (entries behind each peer), and
 * `molo_replication_resyncs_total{node,peer}` (full resyncs after falling behind retention).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { PullStatus } from './pull-replicator.js';

interface MeteredReplication {
  readonly nodeName: string;
  stats(): { readonly peers: readonly PullStatus[] };
}

export class ReplicationTransportMetrics {
  readonly services = new Set<MeteredReplication>();

  constructor(registry: Registry) {
    const services = this.services;
    const perPeer = (Kind: typeof Gauge | typeof Counter, name: string, help: string, read: (status: PullStatus) => number): void => {
      new Kind({
        name,
        help,
        labelNames: ['node', 'peer'],
        registers: [registry],
        collect() {
          this.reset();
          for (const service of services) for (const status of service.stats().peers) (this as Gauge).inc({ node: service.nodeName, peer: status.peer }, read(status));
        },
      });
    };
    perPeer(Gauge, 'molo_replication_lag_entries', "Entries of a peer's oplog not applied here yet (its head less this node's cursor).", (status) => status.lag);
    perPeer(Counter, 'molo_replication_resyncs_total', "Full resyncs from a peer's snapshot after this node's cursor fell behind its retention.", (status) => status.resyncs);
  }
}

const byRegistry = new WeakMap<Registry, ReplicationTransportMetrics>();

export function replicationMetrics(registry: Registry | undefined): ReplicationTransportMetrics | undefined {
  if (registry === undefined) return undefined;
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) byRegistry.set(registry, (metrics = new ReplicationTransportMetrics(registry)));
  return metrics;
}
