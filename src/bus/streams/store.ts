/**
 * The durable stream store: an append-only log per stream with gapless sequence numbers, named
 * durable consumers whose cursor (ack floor plus pending deliveries) the store keeps, acks with
 * deadlines and redelivery, and retention. One interface; the SQL store implements it on SQLite
 * and on Postgres. Pull-based: consumers call `fetch` (actors poll, see StreamConsumer).
 */
import type { DataContext } from '../../data/index.js';

export type RetentionPolicy = 'limits' | 'workqueue';

export interface StreamConfig {
  /** Messages older than this are evicted (default 24 h). */
  readonly maxAgeMs?: number;
  /** Oldest messages are evicted beyond this many payload bytes (default 1 GiB). */
  readonly maxBytes?: number;
  /** Oldest messages are evicted beyond this many messages (default 100 million). */
  readonly maxMsgs?: number;
  /** `limits` (default): only the limits evict. `workqueue`: a message also goes once every consumer has acked it. */
  readonly retention?: RetentionPolicy;
  /** Publishes with the same `msgId` within this window are stored once (default 2 min, at most 1 h). */
  readonly dedupWindowMs?: number;
}

export type ResolvedStreamConfig = Required<StreamConfig>;

export interface StreamInfo {
  readonly name: string;
  readonly config: ResolvedStreamConfig;
  /** Last sequence ever assigned (0: none yet); sequences never go back, even when messages are evicted. */
  readonly lastSeq: number;
  /** Messages and payload bytes retained now. */
  readonly messages: number;
  readonly bytes: number;
  readonly consumers: number;
}

/** Where a new consumer starts. */
export type DeliverPolicy = 'all' | 'new' | { readonly startSeq: number } | { readonly startTime: number };

export interface ConsumerConfig {
  /** Where it starts (default `all`: the first retained message). Only read at creation. */
  readonly deliverPolicy?: DeliverPolicy;
  /** An unacked delivery is redelivered after this (default 30 s, at most 12 h). */
  readonly ackWaitMs?: number;
  /** Deliveries of one message before it is terminated with reason `maxDeliver` (default 20). */
  readonly maxDeliver?: number;
  /** Unacked deliveries it may hold; fetch hands out no new message beyond (default 1,000). */
  readonly maxAckPending?: number;
}

export interface ResolvedConsumerConfig {
  readonly deliverPolicy: DeliverPolicy;
  readonly ackWaitMs: number;
  readonly maxDeliver: number;
  readonly maxAckPending: number;
}

export interface ConsumerInfo {
  readonly stream: string;
  readonly name: string;
  readonly config: ResolvedConsumerConfig;
  /** Every sequence below it is acked, terminated or evicted. */
  readonly ackFloor: number;
  /** The next sequence never delivered to it. */
  readonly nextSeq: number;
  /** Deliveries held unacked (naked ones waiting for their delay included). */
  readonly pending: number;
  /** Messages published and not yet delivered to it. */
  readonly lag: number;
}

export type StreamHeaders = Readonly<Record<string, string>>;

/** A payload as bytes, or any value msgpack encodes (then `value()` decodes it). */
export type StreamPayload = Uint8Array | unknown;

export interface StreamPublishOptions {
  readonly headers?: StreamHeaders;
  /** De-duplication id: a second publish with it within the window resolves with the first sequence. */
  readonly msgId?: string;
  readonly ctx?: DataContext;
}

export interface PublishAck {
  readonly stream: string;
  readonly seq: number;
  /** True when `msgId` was seen within the window: nothing stored, `seq` is the first publish's. */
  readonly duplicate: boolean;
}

export interface StreamMessage {
  readonly stream: string;
  readonly seq: number;
  /** When it was published: ms since the epoch on the store's clock. */
  readonly time: number;
  readonly headers: StreamHeaders | undefined;
  /** The payload's bytes (the msgpack encoding for a value). */
  readonly payload: Buffer;
  /** Whether the publisher gave bytes or a value. */
  readonly encoding: 'bytes' | 'msgpack';
  /** The payload decoded: the value for `msgpack`, the bytes for `bytes`. */
  value<T = unknown>(): T;
}

/** A message handed to one consumer: settle it with one of `ack`, `nak` or `term` (or stretch it with `inProgress`). */
export interface Delivery extends StreamMessage {
  readonly consumer: string;
  /** 1 on the first delivery, then one more on each redelivery. */
  readonly deliveryCount: number;
  ack(): Promise<void>;
  /** Redeliver after `delayMs` (default: at once). */
  nak(delayMs?: number): Promise<void>;
  /** Never redeliver. */
  term(): Promise<void>;
  /** Push the ack deadline a full `ackWaitMs` from now. */
  inProgress(): Promise<void>;
}

export interface StreamFetchOptions {
  /** Messages at most (default 1, at most 1,000). */
  readonly batch?: number;
  /** Waits this long for the first message when none is ready (default 0: answer at once). */
  readonly maxWaitMs?: number;
  /** Ends a wait early (resolving with what there is). */
  readonly signal?: AbortSignal;
  readonly ctx?: DataContext;
}

export interface StreamReadOptions {
  /** Messages at most (default 100, at most 1,000: `streams.maxFetchBatch`). */
  readonly limit?: number;
  readonly ctx?: DataContext;
}

export interface StreamRange {
  readonly messages: readonly StreamMessage[];
  /** The stream's last sequence when the range was read (0: none yet). */
  readonly lastSeq: number;
}

/** Why a message was terminated. */
export type TermReason = 'term' | 'maxDeliver';

/** Events the store reports (StreamStoreOptions.onEvent), besides its metrics. */
export type StreamEvent =
  | { readonly kind: 'terminated'; readonly stream: string; readonly consumer: string; readonly seq: number; readonly reason: TermReason; readonly deliveries: number }
  | { readonly kind: 'evicted'; readonly stream: string; readonly messages: number; readonly reason: 'age' | 'bytes' | 'count' | 'workqueue' }
  /** An operator's purge (`purge`). */
  | { readonly kind: 'purged'; readonly stream: string; readonly messages: number };

/** Which messages a purge deletes: all when empty; otherwise exactly one of these. */
export interface StreamPurgeOptions {
  /** Messages with a sequence below this one (JetStream's `seq`). */
  readonly beforeSeq?: number;
  /** Messages published more than this many ms ago. */
  readonly olderThanMs?: number;
  /** All but the newest `keep` messages. */
  readonly keep?: number;
}

/** Where a consumer's cursor goes: a sequence, the first message at or after a time, the first retained message, or past the last. */
export type ConsumerPosition = { readonly seq: number } | { readonly time: Date | number } | 'first' | 'new';

export interface StreamAckManyResult {
  readonly acked: number;
  readonly refused: readonly { readonly seq: number; readonly error: Error }[];
}

export interface StreamStoreHealth {
  readonly healthy: boolean;
  readonly reason?: string;
}

export interface StreamStore {
  readonly backend: 'sqlite' | 'postgres';
  /** Creates the stream, or returns it when it exists with the same settings (StreamConflict otherwise). */
  createStream(name: string, config?: StreamConfig, ctx?: DataContext): Promise<StreamInfo>;
  streamInfo(name: string, ctx?: DataContext): Promise<StreamInfo>;
  /** Names of all streams, sorted. */
  streams(ctx?: DataContext): Promise<string[]>;
  /** Deletes the stream with its messages and consumers; resolves with whether it existed. */
  deleteStream(name: string, ctx?: DataContext): Promise<boolean>;
  /** Resolves once the message is durably committed, with its sequence. */
  publish(stream: string, payload: StreamPayload, options?: StreamPublishOptions): Promise<PublishAck>;
  /**
   * Retained messages from `fromSeq` on, in sequence order, at most `limit` (default 100, at most
   * 1,000), with the stream's last sequence read in the same transaction: a reader that finds the
   * first message above `fromSeq` (or none while `lastSeq` is at or past it) knows that range was
   * evicted. Reads no cursor and moves none: catch-up readers keep their own position.
   */
  read(stream: string, fromSeq: number, options?: StreamReadOptions): Promise<StreamRange>;
  /** One retained message, or undefined. */
  getMessage(stream: string, seq: number, ctx?: DataContext): Promise<StreamMessage | undefined>;
  /** Creates the consumer, or returns it when it exists with the same settings (StreamConflict otherwise). */
  createConsumer(stream: string, name: string, config?: ConsumerConfig, ctx?: DataContext): Promise<ConsumerInfo>;
  consumerInfo(stream: string, name: string, ctx?: DataContext): Promise<ConsumerInfo>;
  consumers(stream: string, ctx?: DataContext): Promise<string[]>;
  deleteConsumer(stream: string, name: string, ctx?: DataContext): Promise<boolean>;
  /**
   * Up to `batch` deliveries: first the pending ones whose deadline passed (redeliveries), then new
   * messages in sequence order. Workers sharing a consumer never get the same message at once.
   */
  fetch(stream: string, consumer: string, options?: StreamFetchOptions): Promise<Delivery[]>;
  ack(stream: string, consumer: string, seq: number, ctx?: DataContext): Promise<void>;
  /**
   * Acks many deliveries in one call (at most `streams.maxFetchBatch`, 1,000), in one commit with
   * whatever else is acked meanwhile. Each seq settles on its own: the answer counts the acked and
   * lists the refused ones with their error (StreamAckUnknown for one not held), never failing the rest.
   */
  ackMany(stream: string, consumer: string, seqs: readonly number[], ctx?: DataContext): Promise<StreamAckManyResult>;
  /** Deletes messages (all, or what `options` selects); resolves with how many. Consumers' cursors are left as they are. */
  purge(stream: string, options?: StreamPurgeOptions, ctx?: DataContext): Promise<number>;
  /** Moves the consumer's cursor and drops its pending deliveries (JetStream's consumer reset); resolves with its next sequence. */
  seekConsumer(stream: string, consumer: string, position: ConsumerPosition, ctx?: DataContext): Promise<number>;
  nak(stream: string, consumer: string, seq: number, delayMs?: number, ctx?: DataContext): Promise<void>;
  term(stream: string, consumer: string, seq: number, ctx?: DataContext): Promise<void>;
  inProgress(stream: string, consumer: string, seq: number, ctx?: DataContext): Promise<void>;
  /** One bounded retention pass over every stream (or one); resolves with the messages evicted. */
  enforceRetention(stream?: string, ctx?: DataContext): Promise<number>;
  health(): StreamStoreHealth;
  /** Stops accepting calls and waits for publishes in flight; a store that opened its own database closes it. */
  close(): Promise<void>;
}
