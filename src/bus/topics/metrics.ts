/**
 * The topics' Prometheus metrics. Brokers count in plain numbers as they go (they must anyway, for
 * `broker.stats`); the metrics read those numbers at scrape time, so publishing pays nothing extra
 * for them, and nothing at all without a registry.
 *
 * `molo_pubsub_published_total`, `molo_pubsub_enqueued_total` (messages put on subscriptions'
 * queues), `molo_pubsub_dropped_total` (oldest dropped from a full queue), `molo_pubsub_unrouted_total`
 * (publishes no subscription matched), `molo_pubsub_subscriber_errors_total` (callbacks that threw)
 * and the gauge `molo_pubsub_subscriptions{kind}`, all labelled by `broker`.
 */
import type { Counter, Gauge, Registry } from 'prom-client';
import { prom } from '../../telemetry/lazy-modules.js';

export interface TopicCounts {
  published: number;
  enqueued: number;
  dropped: number;
  unrouted: number;
  subscriberErrors: number;
}

/** What the metrics read of a broker. */
export interface MeteredBroker {
  readonly name: string;
  /** Read at scrape time (computing it walks the subscriptions). */
  readonly stats: Readonly<TopicCounts> & { readonly channelSubscriptions: number; readonly patternSubscriptions: number };
}

type CountName = keyof TopicCounts;

const COUNTERS: readonly [CountName, string, string][] = [
  ['published', 'pubsub_published_total', 'Messages published.'],
  ['enqueued', 'pubsub_enqueued_total', 'Messages put on subscriptions’ queues (one per matching subscription).'],
  ['dropped', 'pubsub_dropped_total', 'Messages dropped: the oldest of a full subscription queue, or refused by a mailbox.'],
  ['unrouted', 'pubsub_unrouted_total', 'Publishes that no subscription matched (lost, as pub/sub is at-most-once).'],
  ['subscriberErrors', 'pubsub_subscriber_errors_total', 'Subscriber callbacks that threw or rejected.'],
];

export class TopicMetrics {
  readonly #brokers = new Set<MeteredBroker>();
  /** Counts of closed brokers, by name, so a counter never goes backwards when one closes. */
  readonly #closed = new Map<string, TopicCounts>();

  constructor(registry: Registry, prefix = 'molo_') {
    const registers = [registry];
    const metrics = this;
    for (const [count, name, help] of COUNTERS) {
      new prom.Counter({
        name: `${prefix}${name}`,
        help,
        labelNames: ['broker'],
        registers,
        collect() {
          this.reset();
          for (const [broker, totals] of metrics.#totals()) this.inc({ broker }, totals[count]);
        },
      });
    }
    new prom.Gauge({
      name: `${prefix}pubsub_subscriptions`,
      help: 'Live subscriptions, by kind (channel, pattern).',
      labelNames: ['broker', 'kind'],
      registers,
      collect() {
        this.reset();
        for (const broker of metrics.#brokers) {
          const stats = broker.stats;
          this.inc({ broker: broker.name, kind: 'channel' }, stats.channelSubscriptions);
          this.inc({ broker: broker.name, kind: 'pattern' }, stats.patternSubscriptions);
        }
      },
    });
  }

  add(broker: MeteredBroker): void {
    this.#brokers.add(broker);
  }

  /** The broker closed: its final counts are kept under its name. */
  remove(broker: MeteredBroker): void {
    if (!this.#brokers.delete(broker)) return;
    addInto(this.#closed, broker.name, broker.stats);
  }

  #totals(): Map<string, TopicCounts> {
    const totals = new Map<string, TopicCounts>();
    for (const [name, counts] of this.#closed) addInto(totals, name, counts);
    for (const broker of this.#brokers) addInto(totals, broker.name, broker.stats);
    return totals;
  }
}

function addInto(totals: Map<string, TopicCounts>, name: string, counts: Readonly<TopicCounts>): void {
  let sum = totals.get(name);
  if (sum === undefined) totals.set(name, (sum = { published: 0, enqueued: 0, dropped: 0, unrouted: 0, subscriberErrors: 0 }));
  for (const [count] of COUNTERS) sum[count] += counts[count];
}

const byRegistry = new WeakMap<Registry, TopicMetrics>();

/** The topic metrics of `registry`, created on first use; undefined without a registry. */
export function topicMetrics(registry: Registry | undefined): TopicMetrics | undefined {
  if (registry === undefined) return undefined;
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) byRegistry.set(registry, (metrics = new TopicMetrics(registry)));
  return metrics;
}
