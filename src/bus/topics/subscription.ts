/**
 * One subscription: a reader of its channel's (or pattern's) log, at its own cursor. What lies
 * between its cursor and the log's head is its queue, of which it keeps the newest `capacity`
 * messages; older ones are dropped and counted. Two kinds: a callback, called one message at a
 * time (an async one is awaited before the next), and an actor, whose messages are handed to its
 * mailbox while the mailbox has room.
 */
import { MailboxFull, type ActorSystem, type Ref } from '../../actors/index.js';
import type { TopicMessage } from './message.js';
import type { LogReader, TopicLog } from './topic-log.js';

/** A function called with each message, or an actor that receives each message in its mailbox. */
export type TopicSubscriber = Ref | TopicCallback;
export type TopicCallback = (message: TopicMessage) => void | PromiseLike<void>;

/** Where a subscription stands. */
export const SubscriptionState = {
  /** Reads whenever its log is drained. */
  Idle: 0,
  /** A callback's promise is in flight; its settling wakes the log again. */
  Busy: 1,
  /** An actor's mailbox is full; the dispatcher retries on a timer. */
  Stalled: 2,
  /** Unsubscribed: nothing more is delivered. */
  Closed: 3,
} as const;
export type SubscriptionState = (typeof SubscriptionState)[keyof typeof SubscriptionState];

/** What a subscription needs of its broker. */
export interface SubscriptionHost {
  stall(subscription: Subscription): void;
  remove(subscription: Subscription): boolean;
  countDropped(count: number): void;
  subscriberFailed(subscription: Subscription, error: unknown): void;
}

let nextId = 0;

export abstract class Subscription implements LogReader {
  readonly id = ++nextId;
  /** @internal Sequence of the next message to read in {@link log}. */
  cursor = 0;
  /** Messages handed to the subscriber (the callback was called, or the actor was sent it). */
  delivered = 0;
  /** Messages still queued when the subscription ended, never delivered. */
  discarded = 0;
  /** @internal */
  state: SubscriptionState = SubscriptionState.Idle;
  #droppedCounted = 0;

  constructor(
    /** @internal */
    readonly host: SubscriptionHost,
    /** @internal The log this subscription reads. */
    readonly log: TopicLog,
    /** The channel, or the pattern when {@link isPattern}. */
    readonly topic: string,
    readonly isPattern: boolean,
    /** Messages this subscription holds at most before the oldest is dropped. */
    readonly capacity: number,
  ) {}

  /** Messages dropped so far: the oldest beyond {@link capacity}, or refused by a mailbox. */
  get dropped(): number {
    return this.#droppedCounted + this.overflow;
  }

  /** @internal Messages already beyond capacity, dropped but not yet counted (counted at the next read). */
  get overflow(): number {
    if (this.state === SubscriptionState.Closed) return 0;
    const lag = this.log.head - this.cursor;
    return lag > this.capacity ? lag - this.capacity : 0;
  }

  /** Messages waiting for this subscriber. */
  get queued(): number {
    if (this.state === SubscriptionState.Closed) return 0;
    const lag = this.log.head - this.cursor;
    return lag > this.capacity ? this.capacity : lag;
  }

  get active(): boolean {
    return this.state !== SubscriptionState.Closed;
  }

  /** Stops delivery at once: what is still queued is discarded. False if it had already ended. */
  unsubscribe(): boolean {
    return this.host.remove(this);
  }

  /** @internal Reads what it may; only the dispatcher calls this, never publish. */
  abstract drainFrom(log: TopicLog): void;

  /** @internal Moves the cursor past `count` messages that are lost, and counts them. */
  protected lose(count: number): void {
    this.cursor += count;
    this.#droppedCounted += count;
    this.host.countDropped(count);
  }

  /** @internal Drops what is beyond capacity; returns the cursor to read from. */
  protected settleOverflow(head: number): number {
    const lag = head - this.cursor;
    if (lag > this.capacity) this.lose(lag - this.capacity);
    return this.cursor;
  }

  /** @internal Ends the subscription (the broker takes it out of its indexes). */
  close(): void {
    if (this.state === SubscriptionState.Closed) return;
    const head = this.log.head;
    this.discarded += head - this.settleOverflow(head);
    this.cursor = head;
    this.state = SubscriptionState.Closed;
    this.log.removeReader(this);
  }
}

export class CallbackSubscription extends Subscription {
  /** Calls that threw or rejected (each is counted by the broker and logged sparingly). */
  failures = 0;

  constructor(host: SubscriptionHost, log: TopicLog, topic: string, isPattern: boolean, capacity: number, readonly callback: TopicCallback) {
    super(host, log, topic, isPattern, capacity);
  }

  drainFrom(log: TopicLog): void {
    if (this.state !== SubscriptionState.Idle) return;
    // Messages published while this runs wait for the next drain, so one drain is bounded.
    const head = log.head;
    let cursor = this.settleOverflow(head);
    const callback = this.callback;
    let delivered = 0;
    while (cursor < head) {
      // A callback that publishes on its own channel may have overwritten the oldest entries.
      if (cursor < log.tail) {
        this.lose(log.tail - cursor);
        cursor = this.cursor;
        if (cursor >= head) break;
      }
      const message = log.slots[cursor & log.mask]!;
      this.cursor = ++cursor;
      delivered++;
      let result: unknown;
      try {
        result = callback(message);
      } catch (error) {
        this.#failed(error);
        if (this.state !== SubscriptionState.Idle) break;
        continue;
      }
      if (result !== undefined && result !== null && typeof (result as PromiseLike<void>).then === 'function') {
        if (this.state === SubscriptionState.Idle) this.state = SubscriptionState.Busy;
        (result as PromiseLike<void>).then(this.#settled, this.#rejected);
        break;
      }
      // The callback may have unsubscribed.
      if (this.state !== SubscriptionState.Idle) break;
    }
    this.delivered += delivered;
  }

  #failed(error: unknown): void {
    this.failures++;
    this.host.subscriberFailed(this, error);
  }

  readonly #settled = (): void => {
    if (this.state !== SubscriptionState.Busy) return;
    this.state = SubscriptionState.Idle;
    if (this.cursor < this.log.head) this.log.wake();
  };

  readonly #rejected = (error: unknown): void => {
    this.#failed(error);
    this.#settled();
  };
}

export class ActorSubscription extends Subscription {
  /** @internal Stops watching the actor's exit. */
  unwatch: (() => void) | undefined = undefined;

  constructor(
    host: SubscriptionHost,
    log: TopicLog,
    topic: string,
    isPattern: boolean,
    capacity: number,
    readonly system: ActorSystem,
    readonly ref: Ref,
  ) {
    super(host, log, topic, isPattern, capacity);
  }

  /**
   * Hands messages to the mailbox while it has room: the mailbox holds at most as many as this
   * subscription's capacity, so a slow actor's backlog stays in the log, where the oldest is
   * dropped and counted, rather than piling up in its mailbox.
   */
  drainFrom(log: TopicLog): void {
    if (this.state !== SubscriptionState.Idle) return;
    const head = log.head;
    let cursor = this.settleOverflow(head);
    if (cursor === head) return;
    const info = this.system.info(this.ref);
    if (info === undefined) {
      this.host.remove(this);
      return;
    }
    let room = Math.min(this.capacity, info.mailboxCapacity) - info.mailboxLength;
    // `send` runs no handler, so the log cannot change under this loop.
    const slots = log.slots;
    const mask = log.mask;
    let delivered = 0;
    while (cursor < head && room > 0) {
      const message = slots[cursor & mask]!;
      cursor++;
      room--;
      try {
        this.system.send(this.ref, message);
        delivered++;
      } catch (error) {
        // Not expected with room read from the mailbox itself; a refusal still counts as a drop.
        if (!(error instanceof MailboxFull)) throw error;
        this.cursor = cursor - 1;
        this.lose(1);
        room = 0;
      }
    }
    this.cursor = cursor;
    this.delivered += delivered;
    if (cursor < head) {
      this.state = SubscriptionState.Stalled;
      this.host.stall(this);
    }
  }

  override close(): void {
    super.close();
    this.unwatch?.();
    this.unwatch = undefined;
  }
}
