/**
 * The stream store in a SQL `Database`, written once for SQLite and Postgres (see schema.ts for the
 * tables and the one SQL text). This file holds the store's caches, lifecycle and counters; the SQL
 * of each concern lives beside it: the stream catalogue in stream-ops.ts, consumers and acks in
 * consumer-ops.ts, fetches in delivery-ops.ts, publishes in publish-batch.ts. Publishes and acks are
 * group-committed (group-commit.ts); fetches run one short transaction each; retention runs in
 * bounded passes (retention-pass.ts), driven by the StreamRetention actor or by calls to
 * `enforceRetention`. Times (publish time, deadlines, expiry) are ms since the epoch on the injected
 * clock, never the database server's `now()`, so model tests drive deadlines with a SimulatedClock.
 */
import { systemClock, type Clock } from '../../actors/index.js';
import type { DataContext, Database } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import { carrierOf, RuntimeTracer } from '../../telemetry/index.js';
import { resolveConsumerConfig, resolveRetentionCeilings, resolveStreamConfig, type RetentionCeilings } from './config.js';
import { deleteAcked, insertConsumer, readConsumer, removeConsumer, type ConsumerEntry } from './consumer-ops.js';
import { deliveryStatements, messagesOf, takeDeliveries, type DeliveryStatements, type FetchResult } from './delivery-ops.js';
import { StreamConsumerNotFound, StreamInvalidArgument, StreamNotFound, StreamStoreClosed } from './errors.js';
import { GroupCommit, type Outcome } from './group-commit.js';
import { checkInteger, checkName, checkSeq, STREAM_LIMITS, STREAM_STORE_DEFAULTS } from './limits.js';
import { encodeMessage, StoredDelivery, withTraceHeaders, type Settler } from './message.js';
import { streamMetrics, type MeteredStreamStore, type StreamCounts } from './metrics.js';
import { StreamSettles } from './settles.js';
import { consumerKey, StoreGauges, type ConsumerGauge } from './store-gauges.js';
import { publishStatements, writePublishBatch, type PublishItem, type PublishStatements } from './publish-batch.js';
import { retainStream, retentionStatements, sweepDedup, type EvictionReason, type RetentionStatements } from './retention-pass.js';
import { checkPrefix, createTables, dialect, tablesOf, type StreamTables } from './schema.js';
import { StreamSpanName, type SqlStreamStoreOptions } from './sql-store-options.js';
import { insertStream, readStream, removeStream, type StoreSql } from './stream-ops.js';
import { purgeMessages, seekConsumer } from './stream-admin.js';
import type {
  ConsumerConfig,
  ConsumerInfo,
  Delivery,
  StreamFetchOptions,
  PublishAck,
  StreamPublishOptions,
  ResolvedStreamConfig,
  StreamConfig,
  StreamEvent,
  StreamInfo,
  StreamMessage,
  StreamPayload,
  StreamRange,
  StreamReadOptions,
  StreamStore,
  StreamAckManyResult,
  ConsumerPosition,
  StreamPurgeOptions,
  StreamStoreHealth,
} from './store.js';
import { StoreLifecycle } from '../store/lifecycle.js';

export { StreamSpanName, type SqlStreamStoreOptions };

interface StreamEntry {
  readonly id: number;
  readonly config: ResolvedStreamConfig;
}

export class SqlStreamStore implements StreamStore, MeteredStreamStore {
  readonly backend: 'sqlite' | 'postgres';
  readonly name: string;
  readonly tables: StreamTables;
  readonly #gauges = new StoreGauges();
  readonly #db: Database;
  readonly #options: SqlStreamStoreOptions;
  readonly #clock: Clock;
  readonly #ceilings: RetentionCeilings;
  readonly #sql: (text: string) => string;
  readonly #store: StoreSql;
  readonly #publish: PublishStatements;
  readonly #delivery: DeliveryStatements;
  readonly #retention: RetentionStatements;
  readonly #publisher: GroupCommit<PublishItem, PublishAck>;
  readonly #settles: StreamSettles;
  readonly #life: StoreLifecycle;
  /** How deliveries settle: fenced by their attempt (the store's own methods settle by sequence). */
  readonly #settler: Settler = {
    ack: (stream, consumer, seq, attempt) => this.#settles.ack(stream, consumer, seq, attempt),
    nak: (stream, consumer, seq, attempt, delayMs) => this.#settles.nak(stream, consumer, seq, attempt, delayMs),
    term: (stream, consumer, seq, attempt) => this.#settles.term(stream, consumer, seq, attempt),
    inProgress: (stream, consumer, seq, attempt) => this.#settles.inProgress(stream, consumer, seq, attempt),
  };
  readonly #tracer = new RuntimeTracer();
  readonly #streams = new Map<string, StreamEntry>();
  readonly #consumers = new Map<string, ConsumerEntry>();
  readonly #retentionBatch: number;
  readonly #pollIntervalMs: number;
  readonly #maxPayloadBytes: number;

  get counts(): ReadonlyMap<string, Readonly<StreamCounts>> {
    return this.#gauges.counts;
  }

  get consumerGauges(): ReadonlyMap<string, Readonly<ConsumerGauge>> {
    return this.#gauges.consumers;
  }

  constructor(db: Database, options: SqlStreamStoreOptions = {}) {
    this.#db = db;
    this.#options = options;
    this.backend = db.backend;
    this.name = options.name ?? 'streams';
    const prefix = checkPrefix(options.table ?? 'molo_stream');
    this.tables = tablesOf(prefix);
    this.#clock = options.clock ?? systemClock;
    this.#ceilings = resolveRetentionCeilings(options.retentionCeilings);
    this.#sql = dialect(db.backend);
    this.#store = { db, tables: this.tables, sql: this.#sql };
    this.#life = new StoreLifecycle(db, { prefix, clock: this.#clock, ownsDatabase: options.ownsDatabase, closedError: () => new StreamStoreClosed() });
    this.#publish = publishStatements(this.tables, this.#sql, this.#life.notifyChannel);
    this.#delivery = deliveryStatements(this.tables, this.#sql);
    this.#retention = retentionStatements(this.tables, this.#sql);
    this.#retentionBatch = checkInteger('retentionBatch', options.retentionBatch, STREAM_STORE_DEFAULTS.retentionBatch, 1, 100_000);
    this.#pollIntervalMs = checkInteger('pollIntervalMs', options.pollIntervalMs, STREAM_STORE_DEFAULTS.pollIntervalMs, 10, 60_000);
    this.#maxPayloadBytes = checkInteger('maxPayloadBytes', options.maxPayloadBytes, STREAM_LIMITS.maxPayloadBytes, 0, STREAM_LIMITS.maxPayloadBytes, 'streams.maxPayloadBytes');
    this.#publisher = new GroupCommit({
      run: (items) => this.#writePublishes(items),
      maxBatch: checkInteger('publishBatch', options.publishBatch, STREAM_STORE_DEFAULTS.publishBatch, 1, 4_096),
      maxQueued: STREAM_LIMITS.maxPublishQueue,
      capName: 'streams.maxPublishQueue',
    });
    this.#settles = new StreamSettles({
      store: this.#store,
      delivery: this.#delivery,
      gauges: this.#gauges,
      logger: options.logger,
      open: () => this.#open(),
      consumer: (stream, name, ctx) => this.#consumer(stream, name, ctx),
      now: () => this.#now(),
      wake: (streamId) => this.#life.wakeup.wake(streamId),
      emit: (event) => this.#emit(event),
    });
    streamMetrics(options.metrics)?.add(this);
  }

  /** Creates the tables if missing and, on Postgres, listens for wake-ups. */
  async open(): Promise<this> {
    await createTables(this.#db, checkPrefix(this.#options.table ?? 'molo_stream'));
    await this.#life.listen();
    return this;
  }

  // ---- streams ---------------------------------------------------------------------------------

  async createStream(name: string, config?: StreamConfig, ctx?: DataContext): Promise<StreamInfo> {
    this.#open();
    checkName('stream', name);
    await insertStream(this.#store, name, resolveStreamConfig(config, this.#ceilings), this.#now(), ctx);
    return this.streamInfo(name, ctx);
  }

  async streamInfo(name: string, ctx?: DataContext): Promise<StreamInfo> {
    this.#open();
    checkName('stream', name);
    const row = await readStream(this.#store, name, ctx);
    if (row === undefined) throw new StreamNotFound(name);
    this.#streams.set(name, { id: row.id, config: row.info.config });
    return row.info;
  }

  async streams(ctx?: DataContext): Promise<string[]> {
    this.#open();
    const { rows } = await this.#db.query(`SELECT name FROM ${this.tables.streams} ORDER BY name`, [], ctx);
    return rows.map((row) => String(row.name));
  }

  async deleteStream(name: string, ctx?: DataContext): Promise<boolean> {
    this.#open();
    checkName('stream', name);
    const deleted = await removeStream(this.#store, name, this.#retentionBatch, ctx);
    this.#streams.delete(name);
    for (const [key, entry] of this.#consumers) if (entry.stream === name) this.#consumers.delete(key);
    this.#gauges.forgetStream(name);
    return deleted;
  }

  async #stream(name: string, ctx?: DataContext): Promise<StreamEntry> {
    checkName('stream', name);
    const cached = this.#streams.get(name);
    if (cached !== undefined) return cached;
    await this.streamInfo(name, ctx);
    return this.#streams.get(name)!;
  }

  // ---- publish ---------------------------------------------------------------------------------

  async publish(stream: string, payload: StreamPayload, options: StreamPublishOptions = {}): Promise<PublishAck> {
    this.#open();
    const encoded = encodeMessage(payload, options.headers, this.#maxPayloadBytes);
    const msgId = options.msgId;
    if (msgId !== undefined && (typeof msgId !== 'string' || msgId.length === 0 || msgId.length > STREAM_LIMITS.maxMsgIdLength)) {
      throw new StreamInvalidArgument('msgId', `must be a string of 1..${STREAM_LIMITS.maxMsgIdLength} characters`);
    }
    // A `traceparent` header of the caller's (relayed from elsewhere) is the publish span's parent;
    // then the publish span's own context rides in the headers, so each delivery's span is its child.
    const span = this.#tracer.startSpan(StreamSpanName.publish, { 'messaging.destination.name': stream, 'messaging.message.body.size': encoded.payload.byteLength }, options.headers);
    const message = span === undefined ? encoded : withTraceHeaders(encoded, options.headers, carrierOf(span));
    try {
      let entry = await this.#stream(stream, options.ctx);
      let ack: PublishAck;
      try {
        ack = await this.#publisher.submit({ stream, streamId: entry.id, message, msgId, dedupWindowMs: entry.config.dedupWindowMs });
      } catch (error) {
        // The stream was deleted (and maybe made again) by another instance: look it up once more.
        if (!(error instanceof StreamNotFound)) throw error;
        this.#streams.delete(stream);
        entry = await this.#stream(stream, options.ctx);
        ack = await this.#publisher.submit({ stream, streamId: entry.id, message, msgId, dedupWindowMs: entry.config.dedupWindowMs });
      }
      span?.end(undefined, { 'messaging.message.id': ack.seq });
      return ack;
    } catch (error) {
      span?.end(error);
      throw error;
    }
  }

  async #writePublishes(items: readonly PublishItem[]): Promise<readonly Outcome<PublishAck>[]> {
    const now = this.#now();
    const outcomes = await this.#db.transaction((tx) => writePublishBatch(tx, this.#publish, items, now));
    const added = new Map<string, number>();
    const woken = new Set<number>();
    for (let i = 0; i < items.length; i++) {
      const outcome = outcomes[i]!;
      if (!outcome.ok || outcome.value.duplicate) continue;
      const { stream, streamId } = items[i]!;
      this.#gauges.count(stream).published++;
      added.set(stream, (added.get(stream) ?? 0) + 1);
      woken.add(streamId);
    }
    for (const id of woken) this.#life.wakeup.wake(id);
    this.#gauges.published(added);
    return outcomes;
  }

  async read(stream: string, fromSeq: number, options: StreamReadOptions = {}): Promise<StreamRange> {
    this.#open();
    checkSeq(fromSeq);
    const limit = checkInteger('limit', options.limit, 100, 1, STREAM_LIMITS.maxFetchBatch, 'streams.maxFetchBatch');
    const entry = await this.#stream(stream, options.ctx);
    // One transaction: the last sequence and the rows agree, so "evicted" is never confused with "not yet published".
    return this.#db.transaction(
      async (tx) => {
        const head = await tx.query(this.#sql(`SELECT last_seq FROM ${this.tables.streams} WHERE id = $1::int8`), [entry.id]);
        if (head.rows.length === 0) throw new StreamNotFound(stream);
        const { rows } = await tx.query(this.#delivery.newMessages, [entry.id, fromSeq, limit]);
        return { messages: await messagesOf(tx, this.#delivery, stream, entry.id, rows), lastSeq: toNumber(head.rows[0]!.last_seq) };
      },
      { ctx: options.ctx },
    );
  }

  async getMessage(stream: string, seq: number, ctx?: DataContext): Promise<StreamMessage | undefined> {
    this.#open();
    checkSeq(seq);
    const entry = await this.#stream(stream, ctx);
    const { rows } = await this.#db.query(this.#delivery.messagesIn(1), [entry.id, seq], ctx);
    if (rows.length === 0) return undefined;
    return (await messagesOf(this.#db, this.#delivery, stream, entry.id, rows))[0];
  }

  // ---- consumers -------------------------------------------------------------------------------

  async createConsumer(stream: string, name: string, config?: ConsumerConfig, ctx?: DataContext): Promise<ConsumerInfo> {
    this.#open();
    checkName('consumer', name);
    const resolved = resolveConsumerConfig(config);
    const entry = await this.#stream(stream, ctx);
    await insertConsumer(this.#store, stream, entry.id, name, resolved, this.#now(), ctx);
    return this.consumerInfo(stream, name, ctx);
  }

  async consumerInfo(stream: string, name: string, ctx?: DataContext): Promise<ConsumerInfo> {
    this.#open();
    checkName('stream', stream);
    checkName('consumer', name);
    const found = await readConsumer(this.#store, stream, name, ctx);
    if (found === undefined) {
      await this.#stream(stream, ctx);
      throw new StreamConsumerNotFound(stream, name);
    }
    const { entry, info } = found;
    this.#consumers.set(consumerKey(stream, name), entry);
    this.#gauges.measured(stream, name, info.lag, info.pending);
    return info;
  }

  async consumers(stream: string, ctx?: DataContext): Promise<string[]> {
    this.#open();
    const entry = await this.#stream(stream, ctx);
    const { rows } = await this.#db.query(this.#sql(`SELECT name FROM ${this.tables.consumers} WHERE stream_id = $1::int8 ORDER BY name`), [entry.id], ctx);
    return rows.map((row) => String(row.name));
  }

  async deleteConsumer(stream: string, name: string, ctx?: DataContext): Promise<boolean> {
    this.#open();
    checkName('consumer', name);
    const entry = await this.#stream(stream, ctx);
    const deleted = await removeConsumer(this.#store, entry.id, name, ctx);
    this.#consumers.delete(consumerKey(stream, name));
    this.#gauges.forget(stream, name);
    return deleted;
  }

  async #consumer(stream: string, name: string, ctx?: DataContext): Promise<ConsumerEntry> {
    const cached = this.#consumers.get(consumerKey(stream, name));
    if (cached !== undefined) return cached;
    await this.consumerInfo(stream, name, ctx);
    return this.#consumers.get(consumerKey(stream, name))!;
  }

  // ---- deliveries ------------------------------------------------------------------------------

  async fetch(stream: string, consumer: string, options: StreamFetchOptions = {}): Promise<Delivery[]> {
    this.#open();
    const batch = checkInteger('batch', options.batch, 1, 1, STREAM_LIMITS.maxFetchBatch, 'streams.maxFetchBatch');
    const maxWaitMs = checkInteger('maxWaitMs', options.maxWaitMs, 0, 0, STREAM_LIMITS.maxFetchWaitMs, 'streams.maxFetchWaitMs');
    let target = await this.#consumer(stream, consumer, options.ctx);
    const until = this.#clock.now() + maxWaitMs;
    for (let retried = false; ; ) {
      const now = this.#now();
      const result = await this.#take(target, batch, now, options.ctx);
      if (!result.found) {
        if (retried) throw new StreamConsumerNotFound(stream, consumer);
        // Deleted (and maybe made again) elsewhere: look it up once more.
        retried = true;
        this.#consumers.delete(consumerKey(stream, consumer));
        target = await this.#consumer(stream, consumer, options.ctx);
        continue;
      }
      // The gauges move with every fetch, not only when consumerInfo looks.
      this.#gauges.measured(stream, consumer, result.lag, result.pending);
      const counts = this.#gauges.count(stream);
      for (const { seq, deliveries } of result.exhausted) {
        counts.terminatedMaxDeliver++;
        this.#options.logger?.warn({ event: 'stream.max_deliver', stream, consumer, seq, deliveries }, 'stream message terminated after maxDeliver');
        this.#emit({ kind: 'terminated', stream, consumer, seq, reason: 'maxDeliver', deliveries });
      }
      if (result.taken.length > 0) {
        for (const taken of result.taken) {
          if (taken.deliveryCount === 1) counts.delivered++;
          else counts.redelivered++;
        }
        return result.taken.map((taken) => new StoredDelivery(taken.message, consumer, taken.deliveryCount, this.#settler));
      }
      const left = until - this.#clock.now();
      if (left <= 0 || options.signal?.aborted === true || this.#life.closed) return [];
      await this.#life.wakeup.wait(target.streamId, Math.min(left, this.#pollIntervalMs), options.signal);
      if (this.#life.closed) return [];
    }
  }

  /**
   * One fetch transaction. Acks waiting for their group commit go in it too, ahead of its reads:
   * a consumer that acks a batch and fetches the next pays one commit (one fsync on SQLite) for
   * both. Not inside a caller's transaction (`ctx`): its rollback would undo acks already resolved.
   */
  async #take(target: ConsumerEntry, batch: number, now: number, ctx: DataContext | undefined): Promise<FetchResult> {
    const acks = ctx === undefined ? this.#settles.acker.takeQueued() : undefined;
    if (acks === undefined) return this.#db.transaction((tx) => takeDeliveries(tx, this.#delivery, target, batch, now), { ctx });
    let outcomes: readonly Outcome<void>[];
    let result: FetchResult;
    try {
      [outcomes, result] = await this.#db.transaction((tx) => {
        const acked = deleteAcked(tx, this.#delivery, acks.items);
        return Promise.all([acked, takeDeliveries(tx, this.#delivery, target, batch, now)]);
      });
    } catch (error) {
      acks.fail(error);
      throw error;
    }
    // The fetch's own gauge is exact after it; other consumers' pending gauges go down here.
    this.#gauges.acked(acks.items, outcomes, target.consumerId);
    acks.settle(outcomes);
    return result;
  }

  ack(stream: string, consumer: string, seq: number, ctx?: DataContext): Promise<void> {
    return this.#settles.ack(stream, consumer, seq, undefined, ctx);
  }

  ackMany(stream: string, consumer: string, seqs: readonly number[], ctx?: DataContext): Promise<StreamAckManyResult> {
    return this.#settles.ackMany(stream, consumer, seqs, ctx);
  }

  nak(stream: string, consumer: string, seq: number, delayMs = 0, ctx?: DataContext): Promise<void> {
    return this.#settles.nak(stream, consumer, seq, undefined, delayMs, ctx);
  }

  inProgress(stream: string, consumer: string, seq: number, ctx?: DataContext): Promise<void> {
    return this.#settles.inProgress(stream, consumer, seq, undefined, ctx);
  }

  term(stream: string, consumer: string, seq: number, ctx?: DataContext): Promise<void> {
    return this.#settles.term(stream, consumer, seq, undefined, ctx);
  }

  async purge(stream: string, options: StreamPurgeOptions = {}, ctx?: DataContext): Promise<number> {
    this.#open();
    const entry = await this.#stream(stream, ctx);
    const purged = await purgeMessages(this.#store, this.#retention, entry.id, options, this.#now(), this.#retentionBatch);
    this.#options.logger?.info({ event: 'stream.purged', stream, messages: purged, ...options }, 'stream purged');
    if (purged > 0) this.#emit({ kind: 'purged', stream, messages: purged });
    return purged;
  }

  async seekConsumer(stream: string, consumer: string, position: ConsumerPosition, ctx?: DataContext): Promise<number> {
    this.#open();
    const entry = await this.#consumer(stream, consumer, ctx);
    const next = await seekConsumer(this.#store, entry.streamId, entry.consumerId, position, ctx);
    this.#gauges.forget(stream, consumer);
    this.#options.logger?.info({ event: 'stream.consumer_seek', stream, consumer, next }, 'stream consumer moved');
    this.#life.wakeup.wake(entry.streamId);
    return next;
  }

  // ---- retention -------------------------------------------------------------------------------

  async enforceRetention(stream?: string, ctx?: DataContext): Promise<number> {
    this.#open();
    const now = this.#now();
    const targets: [string, StreamEntry][] = [];
    if (stream !== undefined) targets.push([stream, await this.#stream(stream, ctx)]);
    else {
      const { rows } = await this.#db.query(`SELECT id, name, config FROM ${this.tables.streams} ORDER BY id`, [], ctx);
      for (const row of rows) targets.push([String(row.name), { id: toNumber(row.id), config: JSON.parse(String(row.config)) as ResolvedStreamConfig }]);
    }
    let total = 0;
    for (const [name, entry] of targets) {
      for (const { reason, messages } of await retainStream(this.#db, this.#retention, entry.id, entry.config, now, this.#retentionBatch)) {
        total += messages;
        this.#gauges.count(name)[EVICTED[reason]] += messages;
        this.#emit({ kind: 'evicted', stream: name, messages, reason });
      }
    }
    await sweepDedup(this.#db, this.#retention, now, this.#retentionBatch);
    return total;
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  health(): StreamStoreHealth {
    if (this.#life.closed) return { healthy: false, reason: 'closed' };
    const db = this.#db.health();
    return db.healthy ? { healthy: true } : { healthy: false, reason: db.reason ?? 'database unhealthy' };
  }

  /** Local fetches waiting for messages (for tests and the admin view). */
  get waitingFetches(): number {
    return this.#life.wakeup.waiting;
  }

  close(): Promise<void> {
    return this.#life.close(async () => {
      await this.#publisher.drain();
      await this.#settles.acker.drain();
    });
  }

  #open(): void {
    this.#life.check();
  }

  #now(): number {
    return Math.floor(this.#clock.wallNow());
  }

  #emit(event: StreamEvent): void {
    try {
      this.#options.onEvent?.(event);
    } catch (error) {
      this.#options.logger?.error({ event: 'stream.event_handler_failed', err: error }, 'a stream event handler threw');
    }
  }
}

const EVICTED: Record<EvictionReason, keyof StreamCounts> = { age: 'evictedAge', bytes: 'evictedBytes', count: 'evictedCount', workqueue: 'evictedWorkqueue' };
