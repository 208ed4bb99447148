/**
 * The bus over the node transport, for a cluster of Molo nodes with no shared database. Each topic
 * has one **home** node, chosen by rendezvous hashing of the topic over a static `members` list
 * (the same on every node): the home appends the topic's messages to a durable stream on its own
 * SQLite file, so the topic's sequence is that stream's (gapless, one writer), catch-up reads and
 * retention gaps are the streams', and sequences survive a restart of the home. Other nodes publish
 * and read by calling the home's bus service over their link.
 *
 * Live delivery is a wake-up only, as on the Postgres bus: a node tells each topic's home which
 * topics it tails (`sub`/`unsub`, and its whole set in the peer service's hello), the home sends
 * `wake` after each append, and the subscriber reads from its own position. A lost wake-up costs at
 * most one poll interval; a link that comes back re-reads every tail homed across it.
 *
 * What it does not offer: a topic is unavailable while its home is down or unreachable (publish and
 * read reject with NodeBusUnavailable; subscriptions wait and resume from their position). Members
 * are static: changing them moves topics to new homes with new sequences.
 */
import { createHash } from 'node:crypto';
import type { Registry } from 'prom-client';
import { unknownOptionKey } from '../../actors/option-keys.js';
import { openSqliteStreams, type SqlStreamStore, type StreamConfig } from '../../bus/index.js';
import type { Logger } from '../../telemetry/index.js';
import { parseNodeName } from '../names.js';
import type { Node } from '../node.js';
import { PeerService } from '../peer-service.js';
import { gapOf, type Bus, type BusItem, type BusMessage, type BusRead, type BusSubscription } from './bus.js';
import { NodeBusClosed, NodeBusHomeFailed, NodeBusInvalidArgument, NodeBusUnavailable } from './errors.js';
import { BUS_DEFAULTS, checkTopic, integer } from './postgres-bus.js';
import { Tail, TailsByTopic, type TailSource } from './tail.js';

export interface NodeBusOptions {
  /** The nodes that home topics (default: this node alone). The same list, in any order, on every node. */
  readonly members?: readonly string[];
  /** The SQLite file of the topics this node homes; required when it is a member. */
  readonly file?: string;
  /** Retention of every topic (default: the stream defaults, 24 h). Members must agree. */
  readonly retention?: Pick<StreamConfig, 'maxAgeMs' | 'maxBytes' | 'maxMsgs'>;
  /** Subscriptions look again this often without a wake-up (default 1,000 ms; 10..60,000). */
  readonly pollIntervalMs?: number;
  /** Between retention passes over the topics homed here (default 5,000 ms; 0: none, the caller runs `enforceRetention`). */
  readonly retentionIntervalMs?: number;
  /** Subscriptions this bus holds at most (default 10,000; ceiling 100,000). */
  readonly maxSubscriptions?: number;
  /** How long a call to a topic's home may take (default 5,000 ms; 100..60,000). */
  readonly callTimeoutMs?: number;
  /** Prometheus registry for the metrics of the topic streams homed here (store label `molo_bus`). */
  readonly metrics?: Registry;
  readonly logger?: Logger;
}

const KNOWN: readonly (keyof NodeBusOptions)[] = ['members', 'file', 'retention', 'pollIntervalMs', 'retentionIntervalMs', 'maxSubscriptions', 'callTimeoutMs', 'metrics', 'logger'];
export const NODE_BUS_NAME = 'molo.bus';
/** What a home answers a request for a topic it does not home (the nodes' members differ). */
export const NOT_HOME = 'NODE_BUS_NOT_HOME';
const MAX_INTEREST_PER_PEER = BUS_DEFAULTS.maxSubscriptionsCap;

function checkSeq(seq: unknown): number {
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) throw new NodeBusInvalidArgument('fromSeq', `must be a positive integer, got ${String(seq)}`);
  return seq;
}

/** Rendezvous (highest random weight) hashing: a topic's home moves only if that member is removed. */
export function homeOf(topic: string, members: readonly string[]): string {
  let best = '';
  let bestWeight = '';
  for (const member of members) {
    const weight = createHash('sha256').update(member).update('\0').update(topic).digest('hex');
    if (weight > bestWeight) [best, bestWeight] = [member, weight];
  }
  return best;
}

export class NodeBus implements Bus, TailSource {
  readonly kind = 'node';
  readonly logger: Logger | undefined;
  readonly #node: Node;
  readonly #members: readonly string[];
  readonly #streams: SqlStreamStore | undefined;
  readonly #retention: StreamConfig;
  readonly #maxSubscriptions: number;
  readonly #callTimeoutMs: number;
  readonly #service: PeerService;
  readonly #homes = new Map<string, string>();
  readonly #created = new Map<string, Promise<unknown>>();
  readonly #tails = new TailsByTopic();
  /** Per peer, the topics homed here that it tails: who gets a `wake`. */
  readonly #interest = new Map<string, Set<string>>();
  #closed = false;

  constructor(node: Node, members: readonly string[], streams: SqlStreamStore | undefined, options: NodeBusOptions) {
    this.#node = node;
    this.#members = members;
    this.#streams = streams;
    this.#retention = { ...options.retention };
    this.logger = options.logger ?? node.logger;
    this.#maxSubscriptions = integer('maxSubscriptions', options.maxSubscriptions, BUS_DEFAULTS.maxSubscriptions, 1, BUS_DEFAULTS.maxSubscriptionsCap);
    this.#callTimeoutMs = integer('callTimeoutMs', options.callTimeoutMs, 5_000, 100, 60_000);
    const pollIntervalMs = integer('pollIntervalMs', options.pollIntervalMs, BUS_DEFAULTS.pollIntervalMs, 10, 60_000);
    const retentionIntervalMs = integer('retentionIntervalMs', options.retentionIntervalMs, BUS_DEFAULTS.retentionIntervalMs, 0, 3_600_000);
    this.#service = new PeerService(node, { name: NODE_BUS_NAME, label: 'bus', kinds: ['sub', 'unsub', 'wake'] }, {
      snapshot: () => [...this.#tails.keys()].filter((topic) => this.home(topic) !== node.name),
      merge: (from, state) => this.#merge(from, state),
      message: (kind, from, body) => this.#message(kind, from, body),
      nodedown: (peer) => this.#interest.delete(peer),
      call: (kind, _from, body) => this.#serve(kind, body),
    });
    this.#tails.startTimers(pollIntervalMs, retentionIntervalMs, streams === undefined ? undefined : () => streams.enforceRetention(), this.logger);
  }

  /** The member that homes `topic`. */
  home(topic: string): string {
    let home = this.#homes.get(topic);
    if (home === undefined) {
      // Bounded: a flood of distinct topic names costs a recomputation, never memory.
      if (this.#homes.size >= 10_000) this.#homes.clear();
      this.#homes.set(topic, (home = homeOf(topic, this.#members)));
    }
    return home;
  }

  async publish(topic: string, payload: unknown): Promise<number> {
    this.#check();
    const home = this.home(checkTopic(topic));
    if (home === this.#node.name) return this.#publishHere(topic, payload);
    return (await this.#ask(topic, home, 'pub', [topic, payload])) as number;
  }

  async read(topic: string, fromSeq: number, limit: number = BUS_DEFAULTS.readLimit): Promise<BusRead> {
    this.#check();
    const home = this.home(checkTopic(topic));
    checkSeq(fromSeq);
    integer('limit', limit, BUS_DEFAULTS.readLimit, 1, BUS_DEFAULTS.maxReadLimit);
    const answer = home === this.#node.name ? await this.#readHere(topic, fromSeq, limit) : await this.#ask(topic, home, 'read', [topic, fromSeq, limit]);
    const { rows, lastSeq } = answer as { rows: [number, number, unknown][]; lastSeq: number };
    const messages: BusMessage[] = rows.map(([seq, time, payload]) => ({ topic, seq, time, payload }));
    return { messages, gap: gapOf(topic, fromSeq, messages[0]?.seq, lastSeq), lastSeq };
  }

  async lastSeq(topic: string): Promise<number> {
    this.#check();
    const home = this.home(checkTopic(topic));
    if (home === this.#node.name) return this.#lastHere(topic);
    return (await this.#ask(topic, home, 'last', [topic])) as number;
  }

  subscribe(topic: string, fromSeq: number, handler: (item: BusItem) => void): BusSubscription {
    this.#check();
    const home = this.home(checkTopic(topic));
    checkSeq(fromSeq);
    if (this.#tails.count >= this.#maxSubscriptions) throw new NodeBusInvalidArgument('maxSubscriptions', `at its cap (${this.#maxSubscriptions})`);
    const tail = new Tail(this, topic, fromSeq, handler);
    if (this.#tails.addTail(tail) && home !== this.#node.name) this.#service.sendTo(home, 'sub', topic);
    void tail.pump();
    return tail;
  }

  /** @internal a tail that unsubscribed */
  forget(tail: Tail): void {
    if (this.#tails.removeTail(tail).last) {
      const home = this.home(tail.topic);
      if (home !== this.#node.name && !this.#closed) this.#service.sendTo(home, 'unsub', tail.topic);
    }
  }

  get subscriptions(): number {
    return this.#tails.count;
  }

  /** Peers' messages dropped for speaking for what is not theirs (a `wake` of a topic another node homes), by kind. */
  forgeries(): Record<string, number> {
    return this.#service.forgeries();
  }

  /** One retention pass over the topics homed here and on every connected member; resolves with the messages evicted. */
  async enforceRetention(): Promise<number> {
    this.#check();
    let evicted = (await this.#streams?.enforceRetention()) ?? 0;
    for (const member of this.#members) {
      if (member === this.#node.name || !this.#node.isConnected(member)) continue;
      evicted += (await this.#ask('*', member, 'retain', [])) as number;
    }
    return evicted;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#tails.closeAll();
    this.#service.stop();
    await this.#streams?.close();
  }

  #check(): void {
    if (this.#closed) throw new NodeBusClosed();
  }

  /** A request to `home`; its failures become NodeBusUnavailable (not reached) or NodeBusHomeFailed (refused). */
  async #ask(topic: string, home: string, kind: string, body: readonly unknown[]): Promise<unknown> {
    if (!this.#node.isConnected(home)) throw new NodeBusUnavailable(topic, home, 'is not connected');
    let answer: unknown;
    try {
      answer = await this.#service.call(home, kind, body, this.#callTimeoutMs);
    } catch (error) {
      throw new NodeBusUnavailable(topic, home, `did not answer (${(error as { code?: string }).code ?? String(error)})`);
    }
    if (answer === null) throw new NodeBusHomeFailed(topic, home, 'NO_BUS');
    if (typeof answer === 'object' && 'failed' in answer) throw new NodeBusHomeFailed(topic, home, String((answer as { failed: unknown }).failed));
    return answer;
  }

  /** A peer's request (async: a malformed one rejects, answered as its code, never crashing the service): only for topics homed here (else NOT_HOME: members differ, and two sequences must never exist). */
  async #serve(kind: string, body: readonly unknown[]): Promise<unknown> {
    if (this.#closed) return { failed: NodeBusClosed.code };
    if (kind === 'retain') return this.#streams?.enforceRetention() ?? 0;
    const topic = checkTopic(body[0]);
    if (this.home(topic) !== this.#node.name || this.#streams === undefined) return { failed: NOT_HOME };
    if (kind === 'pub') return this.#publishHere(topic, body[1]);
    if (kind === 'read') return this.#readHere(topic, checkSeq(body[1]), integer('limit', body[2] as number, BUS_DEFAULTS.readLimit, 1, BUS_DEFAULTS.maxReadLimit));
    if (kind === 'last') return this.#lastHere(topic);
    return { failed: 'NODE_BUS_UNKNOWN_REQUEST' };
  }

  async #publishHere(topic: string, payload: unknown): Promise<number> {
    const streams = this.#local(topic);
    await this.#ensure(streams, topic);
    const ack = await streams.publish(topic, payload);
    this.#tails.wake(topic);
    for (const [peer, topics] of this.#interest) if (topics.has(topic)) this.#service.sendTo(peer, 'wake', topic);
    return ack.seq;
  }

  async #readHere(topic: string, fromSeq: number, limit: number): Promise<{ rows: [number, number, unknown][]; lastSeq: number }> {
    const streams = this.#local(topic);
    await this.#ensure(streams, topic);
    const range = await streams.read(topic, fromSeq, { limit });
    return { rows: range.messages.map((message) => [message.seq, message.time, message.value()]), lastSeq: range.lastSeq };
  }

  async #lastHere(topic: string): Promise<number> {
    const streams = this.#local(topic);
    await this.#ensure(streams, topic);
    return (await streams.streamInfo(topic)).lastSeq;
  }

  #local(topic: string): SqlStreamStore {
    if (this.#streams === undefined) throw new NodeBusHomeFailed(topic, this.#node.name, NOT_HOME);
    return this.#streams;
  }

  #ensure(streams: SqlStreamStore, topic: string): Promise<unknown> {
    let made = this.#created.get(topic);
    if (made === undefined) {
      made = streams.createStream(topic, this.#retention);
      made.catch(() => this.#created.delete(topic));
      this.#created.set(topic, made);
    }
    return made;
  }

  /** A peer's hello or sync: the topics homed here that it tails; and its link is (back) up, so tails homed there catch up. */
  #merge(from: string, state: unknown): void {
    const topics = new Set<string>();
    if (Array.isArray(state)) for (const topic of state.slice(0, MAX_INTEREST_PER_PEER)) if (typeof topic === 'string') topics.add(topic);
    this.#interest.set(from, topics);
    for (const [topic, set] of this.#tails) if (this.home(topic) === from) for (const tail of set) void tail.pump();
  }

  #message(kind: string, from: string, body: readonly unknown[]): void {
    const topic = body[0];
    if (typeof topic !== 'string') return;
    if (kind === 'wake') {
      // Only a topic's home wakes its tails; anything else is a peer speaking for another's topic.
      if (this.home(topic) === from) this.#tails.wake(topic);
      else this.#service.forged(kind, from, `wakes topic ${topic.slice(0, 128)} homed on another node`);
      return;
    }
    let topics = this.#interest.get(from);
    if (topics === undefined) this.#interest.set(from, (topics = new Set()));
    // Interest in a topic homed elsewhere would never be used: not kept.
    if (kind === 'sub' && topics.size < MAX_INTEREST_PER_PEER && this.home(topic) === this.#node.name) topics.add(topic);
    else if (kind === 'unsub') topics.delete(topic);
  }
}

/** A bus over `node`'s links: topics homed on `members` (default this node), each a stream in the member's `file`. */
export async function nodeBus(node: Node, options: NodeBusOptions = {}): Promise<NodeBus> {
  const unknown = unknownOptionKey(options, KNOWN);
  if (unknown !== undefined) throw new NodeBusInvalidArgument(`option ${unknown.key}`, unknown.detail);
  const members = [...new Set(options.members ?? [node.name])];
  if (members.length === 0 || members.length > 1_000) throw new NodeBusInvalidArgument('members', 'must name 1..1,000 nodes');
  for (const member of members) {
    try {
      parseNodeName(member);
    } catch {
      throw new NodeBusInvalidArgument('members', `${String(member).slice(0, 300)} is not a node name`);
    }
  }
  const member = members.includes(node.name);
  if (member && options.file === undefined) throw new NodeBusInvalidArgument('file', 'required: this node is a member and homes topics');
  const streams = member
    ? await openSqliteStreams(node.system, { file: options.file!, name: 'molo-bus' }, { name: 'molo_bus', logger: options.logger, metrics: options.metrics })
    : undefined;
  try {
    return new NodeBus(node, members, streams, options);
  } catch (error) {
    await streams?.close();
    throw error;
  }
}
