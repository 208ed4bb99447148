/**
 * Drains logs outside the publisher's stack. A log with new messages waits on a run queue that a
 * microtask drains; one pass drains every log that was waiting when it began, each reader reading
 * up to the head it saw (so a pass is bounded by the subscriptions' capacities). Logs that get
 * messages during a pass (a subscriber publishing) wait for the next pass, after the event loop
 * has had a turn (`setImmediate`), so a publish loop through subscribers cannot starve I/O.
 *
 * Actors whose mailbox is full are retried on a timer: the kernel tells no one when a mailbox
 * drains, so the dispatcher looks again after 1 ms, backing off to 32 ms while nothing moves.
 */
import type { Clock, ClockTimer } from '../../actors/index.js';
import { RingQueue } from '../../actors/ring-queue.js';
import { SubscriptionState, type Subscription } from './subscription.js';
import type { LogScheduler, TopicLog } from './topic-log.js';

const RETRY_MIN_MS = 1;
const RETRY_MAX_MS = 32;

const RESOLVED = Promise.resolve();

export class Dispatcher implements LogScheduler {
  readonly #ready = new RingQueue<TopicLog>();
  #flushPending = false;
  readonly #stalled = new Set<Subscription>();
  #retryTimer: ClockTimer | undefined = undefined;
  #retryDelayMs = RETRY_MIN_MS;
  /** Set while a retry drains: subscriptions that stall again are re-armed once, after it. */
  #retrying = false;

  constructor(readonly clock: Clock) {}

  /** Subscriptions waiting for an actor's mailbox to make room. */
  get stalledCount(): number {
    return this.#stalled.size;
  }

  schedule(log: TopicLog): void {
    this.#ready.push(log);
    if (!this.#flushPending) {
      this.#flushPending = true;
      // A resolved promise's then costs less than queueMicrotask (no AsyncResource per call).
      RESOLVED.then(this.#flush);
    }
  }

  /** An actor subscription found its mailbox full: look again later. */
  stall(subscription: Subscription): void {
    this.#stalled.add(subscription);
    if (this.#retryTimer === undefined && !this.#retrying) this.#armRetry();
  }

  /** Forgets a subscription that ended. */
  forget(subscription: Subscription): void {
    if (this.#stalled.delete(subscription) && this.#stalled.size === 0) this.#disarmRetry();
  }

  /** Stops the retry timer. */
  close(): void {
    this.#stalled.clear();
    this.#disarmRetry();
  }

  readonly #flush = (): void => {
    const ready = this.#ready;
    try {
      for (let count = ready.length; count > 0; count--) ready.shift()!.drain();
    } finally {
      // Even if a drain threw (a bug: subscriber errors are caught), the logs left keep their turn.
      if (ready.length > 0) setImmediate(this.#flush);
      else this.#flushPending = false;
    }
  };

  #armRetry(): void {
    this.#retryTimer = this.clock.setTimer(this.#retry, this.#retryDelayMs);
    this.clock.unrefTimer?.(this.#retryTimer);
  }

  #disarmRetry(): void {
    if (this.#retryTimer === undefined) return;
    this.clock.clearTimer(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#retryDelayMs = RETRY_MIN_MS;
  }

  readonly #retry = (): void => {
    this.#retryTimer = undefined;
    const retried = [...this.#stalled];
    this.#stalled.clear();
    let before = 0;
    for (const subscription of retried) {
      before += subscription.delivered;
      if (subscription.state !== SubscriptionState.Stalled) continue;
      subscription.state = SubscriptionState.Idle;
      const log = subscription.log;
      if (!log.scheduled) {
        log.scheduled = true;
        this.#ready.push(log);
      }
    }
    // Drained now rather than on the next microtask, to see at once whether anything moved.
    const alreadyPending = this.#flushPending;
    if (!alreadyPending) {
      this.#flushPending = true;
      this.#retrying = true;
      try {
        this.#flush();
      } finally {
        this.#retrying = false;
      }
    }
    let after = 0;
    for (const subscription of retried) after += subscription.delivered;
    const moved = alreadyPending || after > before;
    this.#retryDelayMs = moved ? RETRY_MIN_MS : Math.min(this.#retryDelayMs * 2, RETRY_MAX_MS);
    if (this.#stalled.size > 0 && this.#retryTimer === undefined) this.#armRetry();
  };
}
