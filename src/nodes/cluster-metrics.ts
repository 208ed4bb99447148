/**
 * Metrics of the cluster services, read from their stats at scrape time (nothing per message):
 * `molo_global_names{node}`, `molo_global_conflicts_total{node}`, `molo_global_lost_total{node}`,
 * `molo_global_refused_total{node}`, `molo_pg_groups{node}`, `molo_pg_members{node}`,
 * `molo_cluster_topic_messages_total{node,kind}`, `molo_cluster_forged_messages_total{node,service,kind}`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { perNodeMetric } from './per-node-metric.js';

/** What the metrics read of a service: its node's name and its stats. */
export interface MeteredService<S> {
  readonly nodeName: string;
  stats(): S;
  /** Peers' messages dropped as forgeries, by kind. */
  forgeries(): Record<string, number>;
}

interface GlobalCounts {
  readonly names: number;
  readonly conflicts: number;
  readonly lost: number;
  readonly refused: number;
}
interface GroupCounts {
  readonly groups: number;
  readonly members: number;
}
interface TopicCounts {
  readonly published: number;
  readonly forwarded: number;
  readonly received: number;
  readonly rejected: number;
}

export class ClusterMetrics {
  readonly globals = new Set<MeteredService<GlobalCounts>>();
  readonly groups = new Set<MeteredService<GroupCounts>>();
  readonly topics = new Set<MeteredService<TopicCounts>>();

  constructor(registry: Registry, prefix = 'molo_') {
    const registers = [registry];
    const each = <S>(set: Set<MeteredService<S>>, Kind: typeof Gauge | typeof Counter, name: string, help: string, read: (stats: S) => number): void =>
      perNodeMetric(Kind, registers, `${prefix}${name}`, help, () => [...set].map((service) => [service.nodeName, read(service.stats())] as const));
    each(this.globals, Gauge, 'global_names', 'Global names known on this node (all nodes\' holders).', (stats) => stats.names);
    each(this.globals, Counter, 'global_conflicts_total', 'Global name conflicts resolved by the rule on this node.', (stats) => stats.conflicts);
    each(this.globals, Counter, 'global_lost_total', 'Local actors that lost a global name to a conflict (and were told).', (stats) => stats.lost);
    each(this.globals, Counter, 'global_refused_total', "Peers' global entries refused for their registration time.", (stats) => stats.refused);
    each(this.groups, Gauge, 'pg_groups', 'Process groups with at least one member (cluster-wide view).', (stats) => stats.groups);
    each(this.groups, Gauge, 'pg_members', 'Memberships in all groups (cluster-wide view).', (stats) => stats.members);
    const topics = this.topics;
    new Counter({
      name: `${prefix}cluster_topic_messages_total`,
      help: 'Cluster topic messages by kind: published here, forwarded to peers, received from peers, rejected by the local broker.',
      labelNames: ['node', 'kind'],
      registers,
      collect() {
        this.reset();
        for (const service of topics) for (const [kind, count] of Object.entries(service.stats())) this.inc({ node: service.nodeName, kind }, count);
      },
    });
    const services: [string, Set<MeteredService<unknown>>][] = [
      ['global', this.globals as Set<MeteredService<unknown>>],
      ['pg', this.groups as Set<MeteredService<unknown>>],
      ['topics', this.topics as Set<MeteredService<unknown>>],
    ];
    new Counter({
      name: `${prefix}cluster_forged_messages_total`,
      help: "Peers' cluster service messages dropped for speaking for another node or its actors, by service and kind.",
      labelNames: ['node', 'service', 'kind'],
      registers,
      collect() {
        this.reset();
        for (const [service, set] of services) {
          for (const metered of set) for (const [kind, count] of Object.entries(metered.forgeries())) this.inc({ node: metered.nodeName, service, kind }, count);
        }
      },
    });
  }
}

const byRegistry = new WeakMap<Registry, ClusterMetrics>();

/** The cluster service metrics of `registry`, created on first use; undefined without a registry. */
export function clusterMetrics(registry: Registry | undefined): ClusterMetrics | undefined {
  if (registry === undefined) return undefined;
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) byRegistry.set(registry, (metrics = new ClusterMetrics(registry)));
  return metrics;
}
