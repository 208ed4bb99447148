/**
 * How a SQL stream store settles deliveries: ack (group-committed, and carried by the consumer's
 * next fetch when one comes first), nak with a delay, in-progress, and term. A settle with the
 * delivery's attempt is fenced by it (StoredDelivery's methods); the store's own methods settle by
 * sequence. A stale settle is refused with StreamSettleStale, counted and logged.
 */
import type { DataContext } from '../../data/index.js';
import type { Logger } from '../../telemetry/index.js';
import { setDeadline, termOne, writeAcks, type AckItem, type ConsumerEntry } from './consumer-ops.js';
import type { DeliveryStatements } from './delivery-ops.js';
import { StreamCapExceeded, StreamInvalidArgument, StreamSettleStale } from './errors.js';
import { GroupCommit, type Outcome } from './group-commit.js';
import { checkInteger, checkSeq, STREAM_LIMITS } from './limits.js';
import type { StoreGauges } from './store-gauges.js';
import type { StreamAckManyResult, StreamEvent } from './store.js';
import type { StoreSql } from './stream-ops.js';

/** What the settles need of their store. */
export interface SettleContext {
  readonly store: StoreSql;
  readonly delivery: DeliveryStatements;
  readonly gauges: StoreGauges;
  readonly logger: Logger | undefined;
  /** Throws when the store is closed. */
  open(): void;
  consumer(stream: string, name: string, ctx?: DataContext): Promise<ConsumerEntry>;
  now(): number;
  /** A message of the stream is due again: local fetches waiting on it look now. */
  wake(streamId: number): void;
  emit(event: StreamEvent): void;
}

export class StreamSettles {
  /** Acks waiting for their commit; a fetch takes them into its own transaction. */
  readonly acker: GroupCommit<AckItem, void>;

  constructor(private readonly c: SettleContext) {
    this.acker = new GroupCommit({
      run: (items) => this.#writeAcks(items),
      maxBatch: 4_096,
      maxQueued: STREAM_LIMITS.maxAckQueue,
      capName: 'streams.maxAckQueue',
    });
  }

  async ack(stream: string, consumer: string, seq: number, attempt: number | undefined, ctx?: DataContext): Promise<void> {
    this.c.open();
    checkSeq(seq);
    const entry = await this.c.consumer(stream, consumer, ctx);
    await this.acker.submit({ consumer: entry, seq, attempt }).catch((error: unknown) => this.#refused(error));
    this.c.gauges.count(stream).acked++;
  }

  async ackMany(stream: string, consumer: string, seqs: readonly number[], ctx?: DataContext): Promise<StreamAckManyResult> {
    this.c.open();
    if (!Array.isArray(seqs)) throw new StreamInvalidArgument('seqs', 'must be an array of sequences');
    if (seqs.length > STREAM_LIMITS.maxFetchBatch) throw new StreamCapExceeded('streams.maxFetchBatch', STREAM_LIMITS.maxFetchBatch, seqs.length);
    const settled = await Promise.allSettled(seqs.map((seq) => this.ack(stream, consumer, seq, undefined, ctx)));
    const refused = settled.flatMap((outcome, i) => (outcome.status === 'rejected' ? [{ seq: seqs[i]!, error: outcome.reason as Error }] : []));
    return { acked: seqs.length - refused.length, refused };
  }

  async #writeAcks(items: readonly AckItem[]): Promise<readonly Outcome<void>[]> {
    const outcomes = await writeAcks(this.c.store, this.c.delivery, items);
    this.c.gauges.acked(items, outcomes, undefined);
    return outcomes;
  }

  async nak(stream: string, consumer: string, seq: number, attempt: number | undefined, delayMs = 0, ctx?: DataContext): Promise<void> {
    this.c.open();
    checkSeq(seq);
    const delay = checkInteger('delayMs', delayMs, 0, 0, STREAM_LIMITS.maxNakDelayMs, 'streams.maxNakDelayMs');
    const entry = await this.c.consumer(stream, consumer, ctx);
    await setDeadline(this.c.store, this.c.delivery, entry, seq, attempt, this.c.now() + delay, ctx).catch((error: unknown) => this.#refused(error));
    this.c.gauges.count(stream).naked++;
    if (delay === 0) this.c.wake(entry.streamId);
  }

  async inProgress(stream: string, consumer: string, seq: number, attempt: number | undefined, ctx?: DataContext): Promise<void> {
    this.c.open();
    checkSeq(seq);
    const entry = await this.c.consumer(stream, consumer, ctx);
    await setDeadline(this.c.store, this.c.delivery, entry, seq, attempt, this.c.now() + entry.ackWaitMs, ctx).catch((error: unknown) => this.#refused(error));
  }

  async term(stream: string, consumer: string, seq: number, attempt: number | undefined, ctx?: DataContext): Promise<void> {
    this.c.open();
    checkSeq(seq);
    const entry = await this.c.consumer(stream, consumer, ctx);
    const deliveries = await termOne(this.c.store, this.c.delivery, entry, seq, attempt, ctx).catch((error: unknown) => this.#refused(error));
    this.c.gauges.count(stream).terminatedTerm++;
    this.c.gauges.settled(stream, consumer);
    this.c.emit({ kind: 'terminated', stream, consumer, seq, reason: 'term', deliveries });
  }

  /** Rethrows a settle's failure; a stale one is counted (and logged) first. */
  #refused(error: unknown): never {
    if (error instanceof StreamSettleStale) {
      this.c.gauges.count(error.stream).staleSettles++;
      this.c.logger?.warn({ event: 'stream.settle_stale', stream: error.stream, consumer: error.consumer, seq: error.seq, attempt: error.attempt, current: error.current }, 'stale stream settle refused');
    }
    throw error;
  }
}
