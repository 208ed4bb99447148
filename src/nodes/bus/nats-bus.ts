/**
 * The bus on NATS JetStream, for deployments that already run it: each topic is a JetStream stream
 * of its own (so its stream sequence is the topic's gapless sequence), with the same retention on
 * every instance. Reads are direct gets by sequence, bounded; a subscription is an ordered consumer
 * from a sequence, and a jump in its sequences is a range the server evicted: reported as a gap.
 */
import { pack, unpack } from 'msgpackr';
import type { ConsumerMessages, JetStreamClient, JetStreamManager, NatsConnection } from 'nats';
import { unknownOptionKey } from '../../actors/option-keys.js';
import type { Logger } from '../../telemetry/index.js';
import { gapOf, type Bus, type BusItem, type BusMessage, type BusRead, type BusSubscription } from './bus.js';
import { NodeBusClosed, NodeBusInvalidArgument } from './errors.js';
import { BUS_DEFAULTS } from './postgres-bus.js';

export interface NatsBusOptions {
  /** Servers (default `127.0.0.1:4222`). */
  readonly servers?: string | readonly string[];
  /** Stream name prefix (default `MOLO_BUS`). */
  readonly prefix?: string;
  /** Retention of every topic stream (instances of one bus must agree): messages and age. */
  readonly retention?: { readonly maxMsgs?: number; readonly maxAgeMs?: number };
  readonly logger?: Logger;
}

const KNOWN: readonly (keyof NatsBusOptions)[] = ['servers', 'prefix', 'retention', 'logger'];
const TOPIC = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

function checkTopic(topic: unknown): string {
  if (typeof topic !== 'string' || !TOPIC.test(topic)) throw new NodeBusInvalidArgument('topic', 'must be 1-128 letters, digits, _ . or -, not starting with . or -');
  return topic;
}

function checkSeq(seq: unknown): number {
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) throw new NodeBusInvalidArgument('fromSeq', `must be a positive integer, got ${String(seq)}`);
  return seq;
}

export class NatsBus implements Bus {
  readonly kind = 'nats';
  readonly #nc: NatsConnection;
  readonly #js: JetStreamClient;
  readonly #jsm: JetStreamManager;
  readonly #options: NatsBusOptions;
  readonly #prefix: string;
  readonly #created = new Map<string, Promise<unknown>>();
  readonly #subs = new Set<{ closed: boolean; messages: ConsumerMessages | undefined }>();
  #closed = false;

  constructor(nc: NatsConnection, jsm: JetStreamManager, options: NatsBusOptions) {
    this.#nc = nc;
    this.#js = nc.jetstream();
    this.#jsm = jsm;
    this.#options = options;
    this.#prefix = options.prefix ?? 'MOLO_BUS';
  }

  #stream(topic: string): { name: string; subject: string } {
    // Hex: stream names take no dots, and a plain replacement would make two topics one.
    const hex = Buffer.from(topic).toString('hex');
    return { name: `${this.#prefix}_${hex}`, subject: `${this.#prefix.toLowerCase()}.${hex}` };
  }

  #ensure(topic: string): Promise<unknown> {
    let made = this.#created.get(topic);
    if (made === undefined) {
      const { name, subject } = this.#stream(topic);
      const retention = this.#options.retention ?? {};
      made = this.#jsm.streams.add({
        name,
        subjects: [subject],
        max_msgs: retention.maxMsgs ?? -1,
        max_age: (retention.maxAgeMs ?? 24 * 3_600_000) * 1_000_000,
      });
      made.catch(() => this.#created.delete(topic));
      this.#created.set(topic, made);
    }
    return made;
  }

  #check(): void {
    if (this.#closed) throw new NodeBusClosed();
  }

  async publish(topic: string, payload: unknown): Promise<number> {
    this.#check();
    await this.#ensure(checkTopic(topic));
    const ack = await this.#js.publish(this.#stream(topic).subject, pack(payload));
    return ack.seq;
  }

  async lastSeq(topic: string): Promise<number> {
    this.#check();
    await this.#ensure(checkTopic(topic));
    return (await this.#jsm.streams.info(this.#stream(topic).name)).state.last_seq;
  }

  async read(topic: string, fromSeq: number, limit: number = BUS_DEFAULTS.readLimit): Promise<BusRead> {
    this.#check();
    await this.#ensure(checkTopic(topic));
    checkSeq(fromSeq);
    if (!Number.isInteger(limit) || limit < 1 || limit > BUS_DEFAULTS.maxReadLimit) throw new NodeBusInvalidArgument('limit', `must be an integer in 1..${BUS_DEFAULTS.maxReadLimit}`);
    const { name } = this.#stream(topic);
    const { state } = await this.#jsm.streams.info(name);
    const start = Math.max(fromSeq, state.first_seq);
    const end = Math.min(state.last_seq, start + limit - 1);
    const messages: BusMessage[] = [];
    for (let seq = start; seq <= end; seq++) {
      try {
        const stored = await this.#jsm.streams.getMessage(name, { seq });
        messages.push({ topic, seq: stored.seq, time: stored.time.getTime(), payload: unpack(stored.data) });
      } catch {
        // Evicted between the info and the get: the first missing ones widen the gap, a later one ends the read.
        if (messages.length > 0) break;
      }
    }
    return { messages, gap: gapOf(topic, fromSeq, messages[0]?.seq, state.last_seq), lastSeq: state.last_seq };
  }

  subscribe(topic: string, fromSeq: number, handler: (item: BusItem) => void): BusSubscription {
    this.#check();
    checkTopic(topic);
    checkSeq(fromSeq);
    const state = { closed: false, messages: undefined as ConsumerMessages | undefined, nextSeq: fromSeq };
    this.#subs.add(state);
    const deliver = (item: BusItem): void => {
      if (state.closed) return;
      try {
        handler(item);
      } catch (error) {
        this.#options.logger?.error({ event: 'bus.handler_failed', topic, err: error }, 'a bus subscriber threw');
      }
    };
    void (async () => {
      try {
        await this.#ensure(topic);
        const consumer = await this.#js.consumers.get(this.#stream(topic).name, { opt_start_seq: fromSeq });
        const messages = await consumer.consume();
        state.messages = messages;
        if (state.closed) return void messages.stop();
        for await (const m of messages) {
          if (state.closed) break;
          const seq = m.seq;
          if (seq < state.nextSeq) continue;
          if (seq > state.nextSeq) deliver({ kind: 'gap', topic, from: state.nextSeq, to: seq - 1 });
          state.nextSeq = seq + 1;
          deliver({ kind: 'message', topic, seq, time: Math.floor(m.info.timestampNanos / 1_000_000), payload: unpack(m.data) });
        }
      } catch (error) {
        if (!state.closed) this.#options.logger?.warn({ event: 'bus.subscribe_failed', topic, err: error }, 'NATS bus subscription failed');
      }
    })();
    return {
      get nextSeq() {
        return state.nextSeq;
      },
      unsubscribe: () => {
        state.closed = true;
        state.messages?.stop();
        this.#subs.delete(state);
      },
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const sub of this.#subs) {
      sub.closed = true;
      sub.messages?.stop();
    }
    this.#subs.clear();
    await this.#nc.drain().catch(() => this.#nc.close());
  }
}

/**
 * The `nats` client, loaded on first use: it is an optional dependency, so `molo` loads for apps
 * that never use this bus without it installed.
 */
async function loadNats(): Promise<typeof import('nats')> {
  try {
    return await import('nats');
  } catch (error) {
    throw new NodeBusInvalidArgument('natsBus', `needs the 'nats' package (npm install nats): ${(error as Error).message}`);
  }
}

/** A bus on NATS JetStream (`nats-server -js`). */
export async function natsBus(options: NatsBusOptions = {}): Promise<NatsBus> {
  const unknown = unknownOptionKey(options, KNOWN);
  if (unknown !== undefined) throw new NodeBusInvalidArgument(`option ${unknown.key}`, unknown.detail);
  const nc = await (await loadNats()).connect({ servers: (options.servers as string | string[] | undefined) ?? '127.0.0.1:4222' });
  try {
    return new NatsBus(nc, await nc.jetstreamManager(), options);
  } catch (error) {
    await nc.close();
    throw error;
  }
}
