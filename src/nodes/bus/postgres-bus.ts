/**
 * The bus for instances that share only a Postgres database: each topic is a durable stream (the
 * stream store's tables, gapless sequences, retention), and a NOTIFY after each publish wakes the
 * other instances' subscriptions, which then read from their own position. The notification is a
 * wake-up only: a lost one (listener reconnect) costs at most one poll interval, and a reconnect
 * of the listener re-reads every subscription at once.
 */
import type { Registry } from 'prom-client';
import { unknownOptionKey } from '../../actors/option-keys.js';
import { openStreams, type SqlStreamStore, type StreamConfig } from '../../bus/index.js';
import type { PostgresDatabase } from '../../data/index.js';
import type { Logger } from '../../telemetry/index.js';
import { gapOf, type Bus, type BusItem, type BusMessage, type BusRead, type BusSubscription } from './bus.js';
import { NodeBusClosed, NodeBusInvalidArgument } from './errors.js';
import { Tail, TailsByTopic } from './tail.js';

export interface PostgresBusOptions {
  /** Table prefix of the topic streams (default `molo_bus`); instances sharing a bus use the same one. */
  readonly table?: string;
  /** Retention of every topic (default: the stream defaults, 24 h). Instances of one bus must agree. */
  readonly retention?: Pick<StreamConfig, 'maxAgeMs' | 'maxBytes' | 'maxMsgs'>;
  /** Subscriptions look again this often without a wake-up (default 1,000 ms; 10..60,000). */
  readonly pollIntervalMs?: number;
  /** Between retention passes over the topics (default 5,000 ms; 0: none, the caller runs `enforceRetention`). */
  readonly retentionIntervalMs?: number;
  /** Subscriptions this bus holds at most (default 10,000; ceiling 100,000). */
  readonly maxSubscriptions?: number;
  /** Prometheus registry for the topic streams' metrics (store label: the table prefix); none: no metrics. */
  readonly metrics?: Registry;
  readonly logger?: Logger;
}

export const BUS_DEFAULTS = Object.freeze({ pollIntervalMs: 1_000, retentionIntervalMs: 5_000, maxSubscriptions: 10_000, maxSubscriptionsCap: 100_000, readLimit: 100, maxReadLimit: 1_000 });
const KNOWN: readonly (keyof PostgresBusOptions)[] = ['table', 'retention', 'pollIntervalMs', 'retentionIntervalMs', 'maxSubscriptions', 'metrics', 'logger'];
const TOPIC = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

export function integer(option: string, value: number | undefined, fallback: number, min: number, max: number): number {
  const resolved = value ?? fallback;
  if (!Number.isInteger(resolved) || resolved < min || resolved > max) throw new NodeBusInvalidArgument(option, `must be an integer in ${min}..${max}`);
  return resolved;
}

export function checkTopic(topic: unknown): string {
  if (typeof topic !== 'string' || !TOPIC.test(topic)) throw new NodeBusInvalidArgument('topic', 'must be 1-128 letters, digits, _ . or -, not starting with . or -');
  return topic;
}

export class PostgresBus implements Bus {
  readonly kind = 'postgres';
  readonly logger: Logger | undefined;
  readonly #db: PostgresDatabase;
  readonly #streams: SqlStreamStore;
  readonly #channel: string;
  readonly #retention: StreamConfig;
  readonly #maxSubscriptions: number;
  readonly #created = new Map<string, Promise<unknown>>();
  readonly #tails = new TailsByTopic();
  #unlisten: (() => Promise<void>) | undefined;
  #closed = false;

  constructor(db: PostgresDatabase, streams: SqlStreamStore, channel: string, options: PostgresBusOptions) {
    this.#db = db;
    this.#streams = streams;
    this.#channel = channel;
    this.#retention = { ...options.retention };
    this.logger = options.logger;
    this.#maxSubscriptions = integer('maxSubscriptions', options.maxSubscriptions, BUS_DEFAULTS.maxSubscriptions, 1, BUS_DEFAULTS.maxSubscriptionsCap);
  }

  async start(options: PostgresBusOptions): Promise<this> {
    const pollIntervalMs = integer('pollIntervalMs', options.pollIntervalMs, BUS_DEFAULTS.pollIntervalMs, 10, 60_000);
    const retentionIntervalMs = integer('retentionIntervalMs', options.retentionIntervalMs, BUS_DEFAULTS.retentionIntervalMs, 0, 3_600_000);
    this.#unlisten = await this.#db.listen(this.#channel, (payload) => this.#tails.wake(payload), { onResync: () => this.#tails.wakeAll() });
    this.#tails.startTimers(pollIntervalMs, retentionIntervalMs, () => this.enforceRetention(), this.logger);
    return this;
  }

  async publish(topic: string, payload: unknown): Promise<number> {
    this.#check();
    await this.#ensure(checkTopic(topic));
    const ack = await this.#streams.publish(topic, payload);
    // Local subscriptions read at once; the others when the notification reaches them.
    this.#tails.wake(topic);
    await this.#db.notify(this.#channel, topic);
    return ack.seq;
  }

  async read(topic: string, fromSeq: number, limit: number = BUS_DEFAULTS.readLimit): Promise<BusRead> {
    this.#check();
    await this.#ensure(checkTopic(topic));
    if (!Number.isSafeInteger(fromSeq) || fromSeq < 1) throw new NodeBusInvalidArgument('fromSeq', `must be a positive integer, got ${String(fromSeq)}`);
    const range = await this.#streams.read(topic, fromSeq, { limit: integer('limit', limit, BUS_DEFAULTS.readLimit, 1, BUS_DEFAULTS.maxReadLimit) });
    const messages: BusMessage[] = range.messages.map((message) => ({ topic, seq: message.seq, time: message.time, payload: message.value() }));
    return { messages, gap: gapOf(topic, fromSeq, messages[0]?.seq, range.lastSeq), lastSeq: range.lastSeq };
  }

  async lastSeq(topic: string): Promise<number> {
    this.#check();
    await this.#ensure(checkTopic(topic));
    return (await this.#streams.streamInfo(topic)).lastSeq;
  }

  subscribe(topic: string, fromSeq: number, handler: (item: BusItem) => void): BusSubscription {
    this.#check();
    checkTopic(topic);
    if (!Number.isSafeInteger(fromSeq) || fromSeq < 1) throw new NodeBusInvalidArgument('fromSeq', `must be a positive integer, got ${String(fromSeq)}`);
    if (this.#tails.count >= this.#maxSubscriptions) throw new NodeBusInvalidArgument('maxSubscriptions', `at its cap (${this.#maxSubscriptions})`);
    const tail = new Tail(this, topic, fromSeq, handler);
    this.#tails.addTail(tail);
    void tail.pump();
    return tail;
  }

  /** One retention pass over every topic; resolves with the messages evicted. */
  enforceRetention(): Promise<number> {
    return this.#streams.enforceRetention();
  }

  /** @internal a tail that unsubscribed */
  forget(tail: Tail): void {
    this.#tails.removeTail(tail);
  }

  get subscriptions(): number {
    return this.#tails.count;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#tails.closeAll();
    await this.#unlisten?.().catch(() => undefined);
    await this.#streams.close();
  }

  #check(): void {
    if (this.#closed) throw new NodeBusClosed();
  }

  #ensure(topic: string): Promise<unknown> {
    let made = this.#created.get(topic);
    if (made === undefined) {
      made = this.#streams.createStream(topic, this.#retention);
      made.catch(() => this.#created.delete(topic));
      this.#created.set(topic, made);
    }
    return made;
  }
}

/** A bus on a shared Postgres pool: topic streams under `table`, wake-ups on `<table>_pub`. */
export async function postgresBus(db: PostgresDatabase, options: PostgresBusOptions = {}): Promise<PostgresBus> {
  const unknown = unknownOptionKey(options, KNOWN);
  if (unknown !== undefined) throw new NodeBusInvalidArgument(`option ${unknown.key}`, unknown.detail);
  const table = options.table ?? 'molo_bus';
  const streams = await openStreams(db, { name: table, table, logger: options.logger, metrics: options.metrics });
  try {
    return await new PostgresBus(db, streams, `${table}_pub`, options).start(options);
  } catch (error) {
    await streams.close();
    throw error;
  }
}
