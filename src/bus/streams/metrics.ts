/**
 * The streams' Prometheus metrics. Stores count in plain numbers as they go (`store.stats`); the
 * metrics read them at scrape time, as the topics' do, so a store without a registry pays nothing.
 *
 * Counters, labelled by `store` and `stream`: `molo_stream_published_total`,
 * `molo_stream_delivered_total` (first deliveries), `molo_stream_redelivered_total`,
 * `molo_stream_acked_total`, `molo_stream_naked_total`, `molo_stream_stale_settles_total` (settles
 * refused as stale), `molo_stream_terminated_total{reason}`
 * (`term`, `maxDeliver`) and `molo_stream_evicted_total{reason}` (`age`, `bytes`, `count`,
 * `workqueue`). Gauges, labelled by `store`, `stream` and `consumer`, set by each fetch and
 * consumerInfo and moved by acks, terms and publishes in between (so they follow a StreamConsumer as it works):
 * `molo_stream_consumer_lag` (messages not yet delivered) and `molo_stream_consumer_pending`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface StreamCounts {
  published: number;
  delivered: number;
  redelivered: number;
  acked: number;
  naked: number;
  staleSettles: number;
  terminatedTerm: number;
  terminatedMaxDeliver: number;
  evictedAge: number;
  evictedBytes: number;
  evictedCount: number;
  evictedWorkqueue: number;
}

export const emptyCounts = (): StreamCounts => ({
  published: 0,
  delivered: 0,
  redelivered: 0,
  acked: 0,
  naked: 0,
  staleSettles: 0,
  terminatedTerm: 0,
  terminatedMaxDeliver: 0,
  evictedAge: 0,
  evictedBytes: 0,
  evictedCount: 0,
  evictedWorkqueue: 0,
});

/** What the metrics read of a store. */
export interface MeteredStreamStore {
  readonly name: string;
  readonly counts: ReadonlyMap<string, Readonly<StreamCounts>>;
  readonly consumerGauges: ReadonlyMap<string, { readonly stream: string; readonly consumer: string; readonly lag: number; readonly pending: number }>;
}

type Plain = 'published' | 'delivered' | 'redelivered' | 'acked' | 'naked' | 'staleSettles';
const PLAIN: readonly [Plain, string, string][] = [
  ['published', 'stream_published_total', 'Messages stored by publish (duplicates left out).'],
  ['delivered', 'stream_delivered_total', 'First deliveries of messages to consumers.'],
  ['redelivered', 'stream_redelivered_total', 'Redeliveries: after a nak or a missed ack deadline.'],
  ['acked', 'stream_acked_total', 'Deliveries acked.'],
  ['naked', 'stream_naked_total', 'Deliveries naked (to be redelivered).'],
  ['staleSettles', 'stream_stale_settles_total', 'Settles refused because the message had been redelivered since (StreamSettleStale).'],
];
const LABELLED: readonly [string, string, readonly [keyof StreamCounts, string][]][] = [
  ['stream_terminated_total', 'Messages a consumer will never get again: termed, or past maxDeliver.', [
    ['terminatedTerm', 'term'],
    ['terminatedMaxDeliver', 'maxDeliver'],
  ]],
  ['stream_evicted_total', 'Messages removed by retention, by rule.', [
    ['evictedAge', 'age'],
    ['evictedBytes', 'bytes'],
    ['evictedCount', 'count'],
    ['evictedWorkqueue', 'workqueue'],
  ]],
];

export class StreamMetrics {
  readonly #stores = new Set<MeteredStreamStore>();

  constructor(registry: Registry, prefix = 'molo_') {
    const registers = [registry];
    const stores = this.#stores;
    for (const [count, name, help] of PLAIN) {
      new Counter({
        name: `${prefix}${name}`,
        help,
        labelNames: ['store', 'stream'],
        registers,
        collect() {
          this.reset();
          for (const store of stores) for (const [stream, counts] of store.counts) this.inc({ store: store.name, stream }, counts[count]);
        },
      });
    }
    for (const [name, help, reasons] of LABELLED) {
      new Counter({
        name: `${prefix}${name}`,
        help,
        labelNames: ['store', 'stream', 'reason'],
        registers,
        collect() {
          this.reset();
          for (const store of stores) {
            for (const [stream, counts] of store.counts) for (const [count, reason] of reasons) this.inc({ store: store.name, stream, reason }, counts[count]);
          }
        },
      });
    }
    for (const [field, help] of [
      ['lag', 'Messages published and not yet delivered to the consumer (at its last look).'],
      ['pending', 'Deliveries the consumer holds unacked (at its last look).'],
    ] as const) {
      new Gauge({
        name: `${prefix}stream_consumer_${field}`,
        help,
        labelNames: ['store', 'stream', 'consumer'],
        registers,
        collect() {
          this.reset();
          for (const store of stores) {
            for (const gauge of store.consumerGauges.values()) this.set({ store: store.name, stream: gauge.stream, consumer: gauge.consumer }, gauge[field]);
          }
        },
      });
    }
  }

  add(store: MeteredStreamStore): void {
    this.#stores.add(store);
  }
}

const byRegistry = new WeakMap<Registry, StreamMetrics>();

/** The stream metrics of `registry`, created on first use; undefined without a registry. */
export function streamMetrics(registry: Registry | undefined): StreamMetrics | undefined {
  if (registry === undefined) return undefined;
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) byRegistry.set(registry, (metrics = new StreamMetrics(registry)));
  return metrics;
}
