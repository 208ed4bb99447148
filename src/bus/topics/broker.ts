/**
 * Ephemeral pub/sub: at-most-once, never persisted (data spec rule 10). A publish appends one
 * message to its channel's log (and one to each matching pattern's log), which every subscription
 * of that channel or pattern reads at its own cursor, and returns at once; subscribers get it
 * later, from the dispatcher. A message nobody subscribes to is counted and lost.
 *
 * The broker is a plain object, not an actor: publish is a few map lookups and queue pushes, and
 * routing it through a mailbox would add a hop per message and make publish asynchronous for no
 * gain (it already never runs subscriber code). Actors use it directly from their handlers.
 */
import { NoProc, Ref } from '../../actors/index.js';
import { BrokerClosed, InvalidBusOption, InvalidTopicPayload, PatternLimitReached, SubscriptionLimitReached, TopicPayloadTooLarge } from '../errors.js';
import { checkChannel, patternSegments } from './channel.js';
import { Dispatcher } from './dispatcher.js';
import { encodeJson, TopicMessage } from './message.js';
import { topicMetrics, type MeteredBroker, type TopicCounts, type TopicMetrics } from './metrics.js';
import { checkQueueCapacity, DEFAULT_CONTENT_TYPE, MAX_CONTENT_TYPE_LENGTH, resolveBrokerOptions, type BrokerOptions, type ResolvedBrokerOptions } from './options.js';
import { PatternIndex } from './pattern-index.js';
import { ActorSubscription, CallbackSubscription, type Subscription, type SubscriptionHost, type TopicSubscriber } from './subscription.js';
import { TopicLog } from './topic-log.js';

export interface PublishOptions {
  /** A hint for subscribers; default `application/octet-stream` (`application/json` for publishJson). */
  readonly contentType?: string;
}

export interface SubscribeOptions {
  /** This subscription's queue; default the broker's `queueCapacity` (1,024). */
  readonly queueCapacity?: number;
}

/** A broker's running totals (also exported as `molo_pubsub_*` metrics when it has a registry). */
export interface BrokerStats extends Readonly<TopicCounts> {
  readonly channelSubscriptions: number;
  readonly patternSubscriptions: number;
  /** Actor subscriptions waiting for their mailbox to make room. */
  readonly stalled: number;
}

/** Creates a broker; see {@link BrokerOptions} for the caps and their defaults. */
export function createBroker(options: BrokerOptions = {}): Broker {
  return new Broker(options);
}

/** Logs every failure of a subscription up to this count, then only the 2^n-th ones. */
const LOG_EVERY_FAILURE_UNTIL = 8;

export class Broker implements MeteredBroker, SubscriptionHost {
  readonly name: string;
  readonly options: ResolvedBrokerOptions;
  /** Running totals; `dropped` here counts only drops already settled (see {@link stats}). */
  readonly #counts: TopicCounts = { published: 0, enqueued: 0, dropped: 0, unrouted: 0, subscriberErrors: 0 };
  /** One log per subscribed channel, shared by its exact subscriptions. */
  readonly #channels = new Map<string, TopicLog>();
  /** One log per subscribed pattern, shared by that pattern's subscriptions. */
  readonly #patterns = new PatternIndex<TopicLog>();
  readonly #subscriptions = new Set<Subscription>();
  #patternSubscriptions = 0;
  /** Reused by every publish (publish never re-enters: it runs no subscriber code). */
  readonly #matched: TopicLog[] = [];
  readonly #dispatcher: Dispatcher;
  readonly #metrics: TopicMetrics | undefined;
  #closed = false;

  constructor(options: BrokerOptions = {}) {
    this.options = resolveBrokerOptions(options);
    this.name = this.options.name;
    this.#dispatcher = new Dispatcher(this.options.clock);
    this.#metrics = topicMetrics(this.options.registry);
    this.#metrics?.add(this);
  }

  // ---- publishing ---------------------------------------------------------------------------

  /**
   * Enqueues `payload` for every subscription matching `channel` and returns how many that was
   * (0: nobody listens, the message is lost and counted as unrouted). Never waits, never runs a
   * subscriber. The payload is shared, not copied: do not modify it afterwards.
   */
  publish(channel: string, payload: Uint8Array, options?: PublishOptions): number {
    if (this.#closed) throw new BrokerClosed(this.name);
    checkChannel(channel, this.options.maxChannelLength);
    if (!(payload instanceof Uint8Array)) throw new InvalidTopicPayload('must be a Uint8Array or Buffer (use publishJson for values)');
    if (payload.byteLength > this.options.maxPayloadBytes) throw new TopicPayloadTooLarge(payload.byteLength, this.options.maxPayloadBytes);
    const contentType = options?.contentType ?? DEFAULT_CONTENT_TYPE;
    if (contentType !== DEFAULT_CONTENT_TYPE) checkContentType(contentType);
    return this.#route(new TopicMessage(channel, payload, contentType, undefined, this.options.clock.wallNow()));
  }

  /** Publishes `value` as UTF-8 JSON with content type `application/json`; subscribers read it with `message.json()`. */
  publishJson(channel: string, value: unknown, options?: PublishOptions): number {
    const encoded = encodeJson(value);
    return this.publish(channel, encoded.payload, { contentType: options?.contentType ?? encoded.contentType });
  }

  #route(message: TopicMessage): number {
    const counts = this.#counts;
    counts.published++;
    let enqueued = 0;
    const log = this.#channels.get(message.channel);
    if (log !== undefined) {
      log.append(message);
      enqueued = log.readers.length;
    }
    if (this.#patternSubscriptions > 0) {
      const matched = this.#matched;
      this.#patterns.match(message.channel, matched);
      for (let i = 0; i < matched.length; i++) {
        const patternLog = matched[i]!;
        // One message per matching pattern, shared by that pattern's subscribers.
        patternLog.append(message.viaPattern(patternLog.topic));
        enqueued += patternLog.readers.length;
      }
      matched.length = 0;
    }
    if (enqueued === 0) counts.unrouted++;
    else counts.enqueued += enqueued;
    return enqueued;
  }

  // ---- subscribing --------------------------------------------------------------------------

  /** Subscribes to one channel exactly. A ref subscribes that actor (local, alive; needs `system`). */
  subscribe(channel: string, subscriber: TopicSubscriber, options?: SubscribeOptions): Subscription {
    this.#checkOpen();
    checkChannel(channel, this.options.maxChannelLength);
    const capacity = this.#checkNew(subscriber, options);
    let log = this.#channels.get(channel);
    if (log === undefined) this.#channels.set(channel, (log = new TopicLog(this.#dispatcher, channel)));
    return this.#attach(log, false, subscriber, capacity);
  }

  /** Subscribes to every channel `pattern` matches: `*` stands for exactly one `:`-separated segment. */
  subscribePattern(pattern: string, subscriber: TopicSubscriber, options?: SubscribeOptions): Subscription {
    this.#checkOpen();
    const segments = patternSegments(pattern, this.options.maxChannelLength);
    if (this.#patternSubscriptions >= this.options.maxPatternSubscriptions) throw new PatternLimitReached(this.options.maxPatternSubscriptions);
    const capacity = this.#checkNew(subscriber, options);
    let log = this.#patterns.get(pattern);
    if (log === undefined) this.#patterns.set(pattern, segments, (log = new TopicLog(this.#dispatcher, pattern)));
    this.#patternSubscriptions++;
    return this.#attach(log, true, subscriber, capacity);
  }

  /** Ends a subscription (same as `subscription.unsubscribe()`); false if it had already ended. */
  unsubscribe(subscription: Subscription): boolean {
    return subscription.host === this && this.remove(subscription);
  }

  /** Checks everything that can refuse a new subscription, before anything changes; returns its capacity. */
  #checkNew(subscriber: TopicSubscriber, options: SubscribeOptions | undefined): number {
    if (this.#subscriptions.size >= this.options.maxSubscriptions) throw new SubscriptionLimitReached(this.options.maxSubscriptions);
    const capacity = checkQueueCapacity('queueCapacity', options?.queueCapacity, this.options.queueCapacity, this.options.ceilings);
    if (typeof subscriber === 'function') return capacity;
    if (!(subscriber instanceof Ref)) throw new InvalidBusOption('subscriber', 'must be a function or an actor ref');
    const system = this.options.system;
    if (system === undefined) throw new InvalidBusOption('system', 'the broker needs an ActorSystem to subscribe actors');
    // Only local actors: the mailbox's room is read from the system, and topic messages do not cross placements.
    if (system.info(subscriber) === undefined) throw new NoProc(subscriber);
    return capacity;
  }

  #attach(log: TopicLog, isPattern: boolean, subscriber: TopicSubscriber, capacity: number): Subscription {
    let subscription: Subscription;
    if (typeof subscriber === 'function') {
      subscription = new CallbackSubscription(this, log, log.topic, isPattern, capacity, subscriber);
    } else {
      const actor = new ActorSubscription(this, log, log.topic, isPattern, capacity, this.options.system!, subscriber);
      actor.unwatch = this.options.system!.watch(subscriber, () => this.remove(actor));
      subscription = actor;
    }
    log.addReader(subscription);
    this.#subscriptions.add(subscription);
    return subscription;
  }

  // ---- what subscriptions call (SubscriptionHost) -------------------------------------------

  /** @internal */
  stall(subscription: Subscription): void {
    this.#dispatcher.stall(subscription);
  }

  /** @internal */
  countDropped(count: number): void {
    this.#counts.dropped += count;
  }

  /** @internal */
  subscriberFailed(subscription: Subscription, error: unknown): void {
    this.#counts.subscriberErrors++;
    const failures = (subscription as CallbackSubscription).failures;
    const logger = this.options.logger;
    // Sparingly: a subscriber failing on every message must not turn into a log line per message.
    if (logger !== undefined && (failures <= LOG_EVERY_FAILURE_UNTIL || (failures & (failures - 1)) === 0)) {
      logger.warn({ event: 'pubsub.subscriber_failed', topic: subscription.topic, subscription: subscription.id, failures, err: error }, 'pubsub.subscriber_failed');
    }
  }

  /** @internal Ends a subscription and forgets its log once no one reads it. */
  remove(subscription: Subscription): boolean {
    if (!this.#subscriptions.delete(subscription)) return false;
    subscription.close();
    this.#dispatcher.forget(subscription);
    const log = subscription.log;
    if (subscription.isPattern) {
      this.#patternSubscriptions--;
      if (log.readers.length === 0) this.#patterns.delete(log.topic);
    } else if (log.readers.length === 0) {
      this.#channels.delete(log.topic);
    }
    return true;
  }

  // ---- state --------------------------------------------------------------------------------

  get channelSubscriptions(): number {
    return this.#subscriptions.size - this.#patternSubscriptions;
  }

  get patternSubscriptions(): number {
    return this.#patternSubscriptions;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Totals, with `dropped` exact: it includes messages already beyond a subscription's capacity. */
  get stats(): BrokerStats {
    let overflow = 0;
    for (const subscription of this.#subscriptions) overflow += subscription.overflow;
    return {
      ...this.#counts,
      dropped: this.#counts.dropped + overflow,
      channelSubscriptions: this.channelSubscriptions,
      patternSubscriptions: this.#patternSubscriptions,
      stalled: this.#dispatcher.stalledCount,
    };
  }

  /** Ends every subscription (queued messages are discarded) and refuses further use. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const subscription of [...this.#subscriptions]) this.remove(subscription);
    this.#dispatcher.close();
    this.#metrics?.remove(this);
  }

  #checkOpen(): void {
    if (this.#closed) throw new BrokerClosed(this.name);
  }
}

function checkContentType(contentType: unknown): void {
  if (typeof contentType !== 'string' || contentType.length === 0 || contentType.length > MAX_CONTENT_TYPE_LENGTH) {
    throw new InvalidTopicPayload(`contentType must be a string of 1..${MAX_CONTENT_TYPE_LENGTH} characters`);
  }
}
