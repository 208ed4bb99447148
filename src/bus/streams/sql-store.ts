/**
 * The stream store in a SQL `Database`, written once for SQLite and Postgres (see schema.ts for the
 * tables and the one SQL text). Publishes and acks are group-committed (group-commit.ts); fetches
 * run one short transaction each (delivery-ops.ts); retention runs in bounded passes
 * (retention-pass.ts), driven by the StreamRetention actor or by calls to `enforceRetention`.
 * Times (publish time, deadlines, expiry) are ms since the epoch on the injected clock, never the
 * database server's `now()`, so model tests drive deadlines with a SimulatedClock.
 */
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../../actors/index.js';
import type { DataContext, Database } from '../../data/index.js';
import { toNumber } from '../../data/kv/sql-backend.js';
import type { Logger } from '../../telemetry/index.js';
import { RuntimeTracer } from '../../telemetry/index.js';
import { resolveConsumerConfig, resolveStreamConfig, sameSettings } from './config.js';
import { deliveryStatements, messagesOf, takeDeliveries, type DeliveryStatements, type FetchTarget } from './delivery-ops.js';
import { StreamAckUnknown, StreamCapExceeded, StreamConsumerNotFound, StreamInvalidArgument, StreamNotFound, StreamStoreClosed } from './errors.js';
import { GroupCommit, type Outcome } from './group-commit.js';
import { checkInteger, checkName, checkSeq, STREAM_LIMITS, STREAM_STORE_DEFAULTS } from './limits.js';
import { encodeMessage, StoredDelivery, type Settler } from './message.js';
import { emptyCounts, streamMetrics, type MeteredStreamStore, type StreamCounts } from './metrics.js';
import { publishStatements, writePublishBatch, type PublishItem, type PublishStatements } from './publish-batch.js';
import { retainStream, retentionStatements, sweepDedup, type EvictionReason, type RetentionStatements } from './retention-pass.js';
import { checkPrefix, createTables, dialect, tablesOf, type StreamTables } from './schema.js';
import type {
  ConsumerConfig,
  ConsumerInfo,
  Delivery,
  StreamFetchOptions,
  PublishAck,
  StreamPublishOptions,
  ResolvedConsumerConfig,
  ResolvedStreamConfig,
  StreamConfig,
  StreamEvent,
  StreamInfo,
  StreamMessage,
  StreamPayload,
  StreamStore,
  StreamStoreHealth,
} from './store.js';
import { listenForWakeups, Wakeup } from './wakeup.js';

export const StreamSpanName = {
  /** One publish, from the call to its commit. */
  publish: 'molo.stream.publish',
  /** One delivery handed to a StreamConsumer's handler, to its ack or nak. */
  deliver: 'molo.stream.deliver',
} as const;

export interface SqlStreamStoreOptions {
  /** Names the store in metrics and logs (default `streams`). */
  readonly name?: string;
  /** Table prefix (default `molo_stream`); several stores may share a database under different prefixes. */
  readonly table?: string;
  /** Publish time, ack deadlines, retention by age and the de-duplication window read it. Default: the system clock. */
  readonly clock?: Clock;
  /** Publishes one group commit takes at most (default 512; 1..4,096). */
  readonly publishBatch?: number;
  /** Rows one retention pass deletes at most per rule and stream (default 1,000; 1..100,000). */
  readonly retentionBatch?: number;
  /** A waiting fetch looks again this often without a wake-up (default 1,000 ms; 10..60,000). */
  readonly pollIntervalMs?: number;
  /** Payload cap (default and ceiling 1 MiB). */
  readonly maxPayloadBytes?: number;
  /** Prometheus registry for the stream metrics; none: no metrics. */
  readonly metrics?: Registry;
  readonly logger?: Logger;
  /** Terminations and evictions, as they happen. */
  readonly onEvent?: (event: StreamEvent) => void;
  /** Close the database on `close()` (set when the store opened it). */
  readonly ownsDatabase?: boolean;
  readonly ctx?: DataContext;
}

interface StreamEntry {
  readonly id: number;
  readonly config: ResolvedStreamConfig;
}

interface ConsumerEntry extends FetchTarget {
  readonly name: string;
  readonly config: ResolvedConsumerConfig;
}

interface AckItem {
  readonly consumer: ConsumerEntry;
  readonly seq: number;
}

const STREAM_COLUMNS = 'id, name, config, last_seq, msgs, bytes';

export class SqlStreamStore implements StreamStore, Settler, MeteredStreamStore {
  readonly backend: 'sqlite' | 'postgres';
  readonly name: string;
  readonly tables: StreamTables;
  readonly counts = new Map<string, StreamCounts>();
  readonly consumerGauges = new Map<string, { stream: string; consumer: string; lag: number; pending: number }>();
  readonly #db: Database;
  readonly #options: SqlStreamStoreOptions;
  readonly #clock: Clock;
  readonly #sql: (text: string) => string;
  readonly #publish: PublishStatements;
  readonly #delivery: DeliveryStatements;
  readonly #retention: RetentionStatements;
  readonly #publisher: GroupCommit<PublishItem, PublishAck>;
  readonly #acker: GroupCommit<AckItem, void>;
  readonly #wakeup: Wakeup;
  readonly #tracer = new RuntimeTracer();
  readonly #streams = new Map<string, StreamEntry>();
  readonly #consumers = new Map<string, ConsumerEntry>();
  readonly #retentionBatch: number;
  readonly #pollIntervalMs: number;
  readonly #maxPayloadBytes: number;
  readonly #notifyChannel: string | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(db: Database, options: SqlStreamStoreOptions = {}) {
    this.#db = db;
    this.#options = options;
    this.backend = db.backend;
    this.name = options.name ?? 'streams';
    const prefix = checkPrefix(options.table ?? 'molo_stream');
    this.tables = tablesOf(prefix);
    this.#clock = options.clock ?? systemClock;
    this.#sql = dialect(db.backend);
    this.#notifyChannel = db.backend === 'postgres' ? `${prefix}_wake` : undefined;
    this.#publish = publishStatements(this.tables, this.#sql, this.#notifyChannel);
    this.#delivery = deliveryStatements(this.tables, this.#sql);
    this.#retention = retentionStatements(this.tables, this.#sql);
    this.#retentionBatch = checkInteger('retentionBatch', options.retentionBatch, STREAM_STORE_DEFAULTS.retentionBatch, 1, 100_000);
    this.#pollIntervalMs = checkInteger('pollIntervalMs', options.pollIntervalMs, STREAM_STORE_DEFAULTS.pollIntervalMs, 10, 60_000);
    this.#maxPayloadBytes = checkInteger('maxPayloadBytes', options.maxPayloadBytes, STREAM_LIMITS.maxPayloadBytes, 0, STREAM_LIMITS.maxPayloadBytes, 'streams.maxPayloadBytes');
    this.#wakeup = new Wakeup(this.#clock);
    this.#publisher = new GroupCommit({
      run: (items) => this.#writePublishes(items),
      maxBatch: checkInteger('publishBatch', options.publishBatch, STREAM_STORE_DEFAULTS.publishBatch, 1, 4_096),
      maxQueued: STREAM_LIMITS.maxPublishQueue,
      capName: 'streams.maxPublishQueue',
    });
    this.#acker = new GroupCommit({
      run: (items) => this.#writeAcks(items),
      maxBatch: 4_096,
      maxQueued: STREAM_LIMITS.maxPublishQueue,
      capName: 'streams.maxAckQueue',
    });
    streamMetrics(options.metrics)?.add(this);
  }

  /** Creates the tables if missing and, on Postgres, listens for wake-ups. */
  async open(): Promise<this> {
    await createTables(this.#db, checkPrefix(this.#options.table ?? 'molo_stream'));
    this.#unlisten = await listenForWakeups(this.#db, this.#notifyChannel, this.#wakeup);
    return this;
  }

  // ---- streams ---------------------------------------------------------------------------------

  async createStream(name: string, config?: StreamConfig, ctx?: DataContext): Promise<StreamInfo> {
    this.#open();
    checkName('stream', name);
    const resolved = resolveStreamConfig(config);
    const t = this.tables;
    await this.#db.transaction(
      async (tx) => {
        const { rows } = await tx.query(this.#sql(`SELECT config FROM ${t.streams} WHERE name = $1::text`), [name]);
        if (rows.length > 0) return sameSettings(`stream ${JSON.stringify(name)}`, JSON.parse(String(rows[0]!.config)) as object, resolved);
        const count = toNumber((await tx.query(`SELECT count(*) AS n FROM ${t.streams}`)).rows[0]!.n);
        if (count >= STREAM_LIMITS.maxStreams) throw new StreamCapExceeded('streams.maxStreams', STREAM_LIMITS.maxStreams, count + 1);
        await tx.query(this.#sql(`INSERT INTO ${t.streams} (name, config, created_at) VALUES ($1::text, $2::text, $3::int8) ON CONFLICT (name) DO NOTHING`), [
          name,
          JSON.stringify(resolved),
          this.#now(),
        ]);
      },
      { ctx },
    );
    return this.streamInfo(name, ctx);
  }

  async streamInfo(name: string, ctx?: DataContext): Promise<StreamInfo> {
    this.#open();
    checkName('stream', name);
    const t = this.tables;
    const { rows } = await this.#db.query(
      this.#sql(`SELECT ${STREAM_COLUMNS}, (SELECT count(*) FROM ${t.consumers} c WHERE c.stream_id = s.id) AS consumers FROM ${t.streams} s WHERE name = $1::text`),
      [name],
      ctx,
    );
    const row = rows[0];
    if (row === undefined) throw new StreamNotFound(name);
    const config = JSON.parse(String(row.config)) as ResolvedStreamConfig;
    this.#streams.set(name, { id: toNumber(row.id), config });
    return { name, config, lastSeq: toNumber(row.last_seq), messages: toNumber(row.msgs), bytes: toNumber(row.bytes), consumers: toNumber(row.consumers) };
  }

  async streams(ctx?: DataContext): Promise<string[]> {
    this.#open();
    const { rows } = await this.#db.query(`SELECT name FROM ${this.tables.streams} ORDER BY name`, [], ctx);
    return rows.map((row) => String(row.name));
  }

  async deleteStream(name: string, ctx?: DataContext): Promise<boolean> {
    this.#open();
    checkName('stream', name);
    const t = this.tables;
    const sql = this.#sql;
    const deleted = await this.#db.transaction(
      async (tx) => {
        const { rows } = await tx.query(sql(`DELETE FROM ${t.streams} WHERE name = $1::text RETURNING id`), [name]);
        if (rows.length === 0) return false;
        const id = toNumber(rows[0]!.id);
        await tx.query(sql(`DELETE FROM ${t.pending} WHERE consumer_id IN (SELECT id FROM ${t.consumers} WHERE stream_id = $1::int8)`), [id]);
        for (const table of [t.consumers, t.msgs, t.chunks, t.dedup]) await tx.query(sql(`DELETE FROM ${table} WHERE stream_id = $1::int8`), [id]);
        return true;
      },
      { ctx },
    );
    this.#streams.delete(name);
    for (const [key, entry] of this.#consumers) if (entry.stream === name) this.#consumers.delete(key);
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
    const message = encodeMessage(payload, options.headers, this.#maxPayloadBytes);
    const msgId = options.msgId;
    if (msgId !== undefined && (typeof msgId !== 'string' || msgId.length === 0 || msgId.length > STREAM_LIMITS.maxMsgIdLength)) {
      throw new StreamInvalidArgument('msgId', `must be a string of 1..${STREAM_LIMITS.maxMsgIdLength} characters`);
    }
    const span = this.#tracer.startSpan(StreamSpanName.publish, { 'messaging.destination.name': stream, 'messaging.message.body.size': message.payload.byteLength });
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
    const woken = new Set<number>();
    for (let i = 0; i < items.length; i++) {
      const outcome = outcomes[i]!;
      if (!outcome.ok || outcome.value.duplicate) continue;
      this.#count(items[i]!.stream).published++;
      woken.add(items[i]!.streamId);
    }
    for (const id of woken) this.#wakeup.wake(id);
    return outcomes;
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
    const t = this.tables;
    const sql = this.#sql;
    await this.#db.transaction(
      async (tx) => {
        // The stream row's lock serializes creations (and the cap count) across instances.
        const locked = await tx.query(sql(`SELECT last_seq FROM ${t.streams} WHERE id = $1::int8 FOR UPDATE`), [entry.id]);
        if (locked.rows.length === 0) throw new StreamNotFound(stream);
        const lastSeq = toNumber(locked.rows[0]!.last_seq);
        const { rows } = await tx.query(sql(`SELECT config FROM ${t.consumers} WHERE stream_id = $1::int8 AND name = $2::text`), [entry.id, name]);
        if (rows.length > 0) return sameSettings(`consumer ${JSON.stringify(name)} on stream ${JSON.stringify(stream)}`, JSON.parse(String(rows[0]!.config)) as object, resolved);
        const count = toNumber((await tx.query(sql(`SELECT count(*) AS n FROM ${t.consumers} WHERE stream_id = $1::int8`), [entry.id])).rows[0]!.n);
        if (count >= STREAM_LIMITS.maxConsumersPerStream) throw new StreamCapExceeded('streams.maxConsumersPerStream', STREAM_LIMITS.maxConsumersPerStream, count + 1);
        const policy = resolved.deliverPolicy;
        let nextSeq: number;
        if (policy === 'all') nextSeq = 1;
        else if (policy === 'new') nextSeq = lastSeq + 1;
        else if ('startSeq' in policy) nextSeq = policy.startSeq;
        else {
          const found = await tx.query(sql(`SELECT min(seq) AS seq FROM ${t.msgs} WHERE stream_id = $1::int8 AND time >= $2::int8`), [entry.id, policy.startTime]);
          const seq = found.rows[0]?.seq;
          nextSeq = seq === null || seq === undefined ? lastSeq + 1 : toNumber(seq);
        }
        await tx.query(sql(`INSERT INTO ${t.consumers} (stream_id, name, config, next_seq, created_at) VALUES ($1::int8, $2::text, $3::text, $4::int8, $5::int8)`), [
          entry.id,
          name,
          JSON.stringify(resolved),
          nextSeq,
          this.#now(),
        ]);
      },
      { ctx },
    );
    return this.consumerInfo(stream, name, ctx);
  }

  async consumerInfo(stream: string, name: string, ctx?: DataContext): Promise<ConsumerInfo> {
    this.#open();
    checkName('stream', stream);
    checkName('consumer', name);
    const t = this.tables;
    const { rows } = await this.#db.query(
      this.#sql(`SELECT c.id, c.stream_id, c.next_seq, c.config, s.last_seq,
        (SELECT count(*) FROM ${t.pending} p WHERE p.consumer_id = c.id) AS pending,
        (SELECT min(p.seq) FROM ${t.pending} p WHERE p.consumer_id = c.id) AS min_pending,
        (SELECT min(m.seq) FROM ${t.msgs} m WHERE m.stream_id = s.id) AS first_seq
        FROM ${t.consumers} c JOIN ${t.streams} s ON s.id = c.stream_id WHERE s.name = $1::text AND c.name = $2::text`),
      [stream, name],
      ctx,
    );
    const row = rows[0];
    if (row === undefined) {
      await this.#stream(stream, ctx);
      throw new StreamConsumerNotFound(stream, name);
    }
    const config = JSON.parse(String(row.config)) as ResolvedConsumerConfig;
    const nextSeq = toNumber(row.next_seq);
    const lastSeq = toNumber(row.last_seq);
    const firstSeq = row.first_seq === null || row.first_seq === undefined ? lastSeq + 1 : toNumber(row.first_seq);
    const pending = toNumber(row.pending);
    const lag = Math.max(0, lastSeq - Math.max(nextSeq, firstSeq) + 1);
    const ackFloor = (row.min_pending === null || row.min_pending === undefined ? nextSeq : toNumber(row.min_pending)) - 1;
    this.#consumers.set(consumerKey(stream, name), this.#consumerEntry(stream, name, toNumber(row.id), toNumber(row.stream_id), config));
    this.consumerGauges.set(consumerKey(stream, name), { stream, consumer: name, lag, pending });
    return { stream, name, config, ackFloor, nextSeq, pending, lag };
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
    const t = this.tables;
    const sql = this.#sql;
    const deleted = await this.#db.transaction(
      async (tx) => {
        const { rows } = await tx.query(sql(`DELETE FROM ${t.consumers} WHERE stream_id = $1::int8 AND name = $2::text RETURNING id`), [entry.id, name]);
        if (rows.length === 0) return false;
        await tx.query(sql(`DELETE FROM ${t.pending} WHERE consumer_id = $1::int8`), [toNumber(rows[0]!.id)]);
        return true;
      },
      { ctx },
    );
    this.#consumers.delete(consumerKey(stream, name));
    this.consumerGauges.delete(consumerKey(stream, name));
    return deleted;
  }

  #consumerEntry(stream: string, name: string, id: number, streamId: number, config: ResolvedConsumerConfig): ConsumerEntry {
    return { stream, name, streamId, consumerId: id, config, ackWaitMs: config.ackWaitMs, maxDeliver: config.maxDeliver, maxAckPending: config.maxAckPending };
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
      const result = await this.#db.transaction((tx) => takeDeliveries(tx, this.#delivery, target, batch, now), { ctx: options.ctx });
      if (!result.found) {
        if (retried) throw new StreamConsumerNotFound(stream, consumer);
        // Deleted (and maybe made again) elsewhere: look it up once more.
        retried = true;
        this.#consumers.delete(consumerKey(stream, consumer));
        target = await this.#consumer(stream, consumer, options.ctx);
        continue;
      }
      const counts = this.#count(stream);
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
        return result.taken.map((taken) => new StoredDelivery(taken.message, consumer, taken.deliveryCount, this));
      }
      const left = until - this.#clock.now();
      if (left <= 0 || options.signal?.aborted === true || this.#closed) return [];
      await this.#wakeup.wait(target.streamId, Math.min(left, this.#pollIntervalMs), options.signal);
      if (this.#closed) return [];
    }
  }

  async ack(stream: string, consumer: string, seq: number, ctx?: DataContext): Promise<void> {
    this.#open();
    checkSeq(seq);
    const entry = await this.#consumer(stream, consumer, ctx);
    await this.#acker.submit({ consumer: entry, seq });
    this.#count(stream).acked++;
  }

  /** Acks grouped by consumer: one DELETE of up to 1,000 sequences each, all at once. */
  async #writeAcks(items: readonly AckItem[]): Promise<readonly Outcome<void>[]> {
    const groups = new Map<number, number[]>();
    for (let i = 0; i < items.length; i++) {
      const id = items[i]!.consumer.consumerId;
      const list = groups.get(id);
      if (list === undefined) groups.set(id, [i]);
      else list.push(i);
    }
    const removed = new Map<number, Set<number>>();
    const deletes: Promise<void>[] = [];
    for (const [consumerId, indexes] of groups) {
      const seqs = [...new Set(indexes.map((index) => items[index]!.seq))];
      const set = new Set<number>();
      removed.set(consumerId, set);
      for (let k = 0; k < seqs.length; k += 1_000) {
        const part = seqs.slice(k, k + 1_000);
        deletes.push(
          this.#db.query(this.#delivery.deletePending(part.length), [consumerId, ...part]).then(({ rows }) => {
            for (const row of rows) set.add(toNumber(row.seq));
          }),
        );
      }
    }
    await Promise.all(deletes);
    return items.map((item): Outcome<void> => {
      const set = removed.get(item.consumer.consumerId)!;
      // A second ack of one sequence in the same batch finds it gone.
      if (set.delete(item.seq)) return { ok: true, value: undefined };
      return { ok: false, error: new StreamAckUnknown(item.consumer.stream, item.consumer.name, item.seq) };
    });
  }

  async nak(stream: string, consumer: string, seq: number, delayMs = 0, ctx?: DataContext): Promise<void> {
    this.#open();
    checkSeq(seq);
    const delay = checkInteger('delayMs', delayMs, 0, 0, STREAM_LIMITS.maxNakDelayMs, 'streams.maxNakDelayMs');
    const entry = await this.#consumer(stream, consumer, ctx);
    await this.#setDeadline(entry, seq, this.#now() + delay, ctx);
    this.#count(stream).naked++;
    if (delay === 0) this.#wakeup.wake(entry.streamId);
  }

  async inProgress(stream: string, consumer: string, seq: number, ctx?: DataContext): Promise<void> {
    this.#open();
    checkSeq(seq);
    const entry = await this.#consumer(stream, consumer, ctx);
    await this.#setDeadline(entry, seq, this.#now() + entry.ackWaitMs, ctx);
  }

  async #setDeadline(entry: ConsumerEntry, seq: number, deadline: number, ctx?: DataContext): Promise<void> {
    const { rows } = await this.#db.query(this.#delivery.setDeadline, [entry.consumerId, seq, deadline], ctx);
    if (rows.length === 0) throw new StreamAckUnknown(entry.stream, entry.name, seq);
  }

  async term(stream: string, consumer: string, seq: number, ctx?: DataContext): Promise<void> {
    this.#open();
    checkSeq(seq);
    const entry = await this.#consumer(stream, consumer, ctx);
    const { rows } = await this.#db.query(this.#delivery.settleOne, [entry.consumerId, seq], ctx);
    if (rows.length === 0) throw new StreamAckUnknown(stream, consumer, seq);
    this.#count(stream).terminatedTerm++;
    this.#emit({ kind: 'terminated', stream, consumer, seq, reason: 'term', deliveries: toNumber(rows[0]!.deliveries) });
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
        this.#count(name)[EVICTED[reason]] += messages;
        this.#emit({ kind: 'evicted', stream: name, messages, reason });
      }
    }
    await sweepDedup(this.#db, this.#retention, now, this.#retentionBatch);
    return total;
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  health(): StreamStoreHealth {
    if (this.#closed) return { healthy: false, reason: 'closed' };
    const db = this.#db.health();
    return db.healthy ? { healthy: true } : { healthy: false, reason: db.reason ?? 'database unhealthy' };
  }

  /** Local fetches waiting for messages (for tests and the admin view). */
  get waitingFetches(): number {
    return this.#wakeup.waiting;
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    this.#wakeup.wakeAll();
    await this.#publisher.drain();
    await this.#acker.drain();
    await this.#unlisten?.().catch(() => undefined);
    if (this.#options.ownsDatabase === true) await this.#db.close();
  }

  #open(): void {
    if (this.#closed) throw new StreamStoreClosed();
  }

  #now(): number {
    return Math.floor(this.#clock.wallNow());
  }

  #count(stream: string): StreamCounts {
    let counts = this.counts.get(stream);
    if (counts === undefined) this.counts.set(stream, (counts = emptyCounts()));
    return counts;
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

function consumerKey(stream: string, consumer: string): string {
  return `${stream}\u0000${consumer}`;
}
