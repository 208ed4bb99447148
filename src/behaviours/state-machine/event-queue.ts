import type { EventObject } from 'xstate';
import { InsertLimitReached, PostponeLimitReached } from '../errors.js';
import type { TimeoutFired } from './timeouts.js';

interface Queued {
  /** An event, or a zero timeout whose event is claimed when its turn comes (it may be stale by then). */
  readonly event: EventObject | TimeoutFired;
  /** Came from `nextEvent` (counts against `maxInserted`), not from the postponed list. */
  readonly inserted: boolean;
}

/**
 * The events a state machine handles before its mailbox: gen_statem's inserted (`next_event`) and
 * postponed events. After each transition the events it inserted go first, then, if the state
 * changed, every postponed event, oldest first, then whatever was already waiting here.
 *
 * The queue is a stack whose top is the next event, so putting a batch in front costs one push per
 * event however long the queue is.
 */
export class EventQueue {
  readonly #stack: Queued[] = [];
  #postponed: EventObject[] = [];
  /** Inserted by the transition in progress, not yet queued. */
  #inserting: EventObject[] = [];
  /** Inserted events waiting, queued or not. */
  #insertedWaiting = 0;

  constructor(
    readonly maxPostponed: number,
    readonly maxInserted: number,
  ) {}

  get length(): number {
    return this.#stack.length;
  }

  get postponedCount(): number {
    return this.#postponed.length;
  }

  /** Keeps `event` until the state changes; throws once `maxPostponed` events are waiting. */
  postpone(event: EventObject): void {
    if (this.#postponed.length >= this.maxPostponed) throw new PostponeLimitReached(this.maxPostponed);
    this.#postponed.push(event);
  }

  /** Queues `event` ahead of everything once the current transition ends; throws past `maxInserted`. */
  insert(event: EventObject): void {
    if (this.#insertedWaiting >= this.maxInserted) throw new InsertLimitReached(this.maxInserted);
    this.#insertedWaiting++;
    this.#inserting.push(event);
  }

  /** Ends a transition: its inserted events first, then (on a state change) the postponed ones. */
  commit(stateChanged: boolean): void {
    if (stateChanged && this.#postponed.length > 0) {
      const postponed = this.#postponed;
      this.#postponed = [];
      for (let i = postponed.length - 1; i >= 0; i--) this.#stack.push({ event: postponed[i]!, inserted: false });
    }
    if (this.#inserting.length > 0) {
      const inserting = this.#inserting;
      this.#inserting = [];
      for (let i = inserting.length - 1; i >= 0; i--) this.#stack.push({ event: inserting[i]!, inserted: true });
    }
  }

  /**
   * A zero timeout (gen_statem inserts it rather than starting a timer): after every event already
   * queued, including those the current transition inserts, and before any mailbox message.
   */
  appendTimeout(message: TimeoutFired): void {
    this.#stack.unshift({ event: message, inserted: false });
  }

  next(): EventObject | TimeoutFired | undefined {
    const queued = this.#stack.pop();
    if (queued === undefined) return undefined;
    if (queued.inserted) this.#insertedWaiting--;
    return queued.event;
  }
}
