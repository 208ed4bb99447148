/**
 * What a SQL stream store counts for its metrics (metrics.ts reads both maps): per stream, its
 * counters; per local consumer, its lag and pending gauges. The gauges are set exactly by each
 * fetch and `consumerInfo`, and moved in between by what this store sees (a publish adds to lag,
 * an ack or term takes one off pending), so they stay close without a query.
 */
import type { AckItem } from './consumer-ops.js';
import type { Outcome } from './group-commit.js';
import { emptyCounts, type StreamCounts } from './metrics.js';

export interface ConsumerGauge {
  readonly stream: string;
  readonly consumer: string;
  lag: number;
  pending: number;
}

export function consumerKey(stream: string, consumer: string): string {
  return `${stream}\u0000${consumer}`;
}

export class StoreGauges {
  readonly counts = new Map<string, StreamCounts>();
  readonly consumers = new Map<string, ConsumerGauge>();

  count(stream: string): StreamCounts {
    let counts = this.counts.get(stream);
    if (counts === undefined) this.counts.set(stream, (counts = emptyCounts()));
    return counts;
  }

  /** The consumer's gauges as a fetch or `consumerInfo` just read them. */
  measured(stream: string, consumer: string, lag: number, pending: number): void {
    this.consumers.set(consumerKey(stream, consumer), { stream, consumer, lag, pending });
  }

  /** Unknown until the next fetch (the consumer was moved or deleted). */
  forget(stream: string, consumer: string): void {
    this.consumers.delete(consumerKey(stream, consumer));
  }

  forgetStream(stream: string): void {
    for (const [key, gauge] of this.consumers) if (gauge.stream === stream) this.consumers.delete(key);
  }

  /** Local consumers fall behind by what was added (other instances' publishes show at their next fetch). */
  published(added: ReadonlyMap<string, number>): void {
    for (const gauge of this.consumers.values()) gauge.lag += added.get(gauge.stream) ?? 0;
  }

  /** One delivery of the consumer acked or termed: its pending gauge goes down at once. */
  settled(stream: string, consumer: string): void {
    const gauge = this.consumers.get(consumerKey(stream, consumer));
    if (gauge !== undefined && gauge.pending > 0) gauge.pending--;
  }

  /** Acked deliveries leave the pending gauges at once (but for `except`'s, which its fetch sets). */
  acked(items: readonly AckItem[], outcomes: readonly Outcome<void>[], except: number | undefined): void {
    if (this.consumers.size === 0) return;
    for (let i = 0; i < items.length; i++) {
      const { consumer } = items[i]!;
      if (outcomes[i]!.ok && consumer.consumerId !== except) this.settled(consumer.stream, consumer.name);
    }
  }
}
