import type { EventObject } from 'xstate';
import { MAX_TIMEOUT_MS, type ActorContext, type TimerEntry } from '../../actors/index.js';
import { InvalidTimeout } from '../errors.js';

export type TimeoutKind = 'state' | 'event' | 'generic' | 'delayed';

/**
 * The message a timeout sends to its own actor. The message object is also the timeout's identity:
 * one that was cancelled or replaced after it was already queued is recognised as stale and dropped.
 */
export class TimeoutFired {
  constructor(
    readonly kind: TimeoutKind,
    readonly key: unknown,
    /** Replaced by an update (gen_statem's `{timeout, update, Content}`), the expiry unchanged. */
    public event: EventObject,
  ) {}
}

/** gen_statem's timeout options: `absolute` reads the time as a point on the actor's clock (`ctx.now()`), as `{abs, true}`. */
export interface TimeoutOptions {
  readonly absolute?: boolean;
}

interface Slot {
  /** Null for a zero timeout: it was put in the event queue, not on a timer. */
  readonly entry: TimerEntry | null;
  readonly message: TimeoutFired;
}

let delayedIds = 0;

/**
 * gen_statem's timeouts on the actor's own timers (`ctx.sendAfter`), so they obey the system's clock
 * and are released when the actor exits:
 * - the state timeout (one at a time; the runner cancels it when the state changes),
 * - the event timeout (one at a time; the runner cancels it when any event arrives),
 * - generic timeouts, by name (each replaces its namesake; only cancelled explicitly),
 * - xstate's delayed events (`after`, `raise`/`sendTo` with a delay), by send id.
 *
 * A delay of `Infinity` cancels the timeout of that kind without starting one (OTP's `infinity`).
 */
export class Timeouts {
  #state: Slot | null = null;
  #event: Slot | null = null;
  readonly #generic = new Map<unknown, Slot>();
  readonly #delayed = new Map<string, Slot>();

  constructor(
    readonly ctx: ActorContext,
    /**
     * Takes a zero timeout: gen_statem starts no timer for one but queues its event after the
     * events already queued, before any message still in the mailbox.
     */
    readonly enqueue: (message: TimeoutFired) => void,
  ) {}

  /** The current state timeout; the runner compares it across a transition. */
  get stateTimer(): object | null {
    return this.#state;
  }

  setState(delayMs: number, event: EventObject, options?: TimeoutOptions): void {
    const slot = this.#start('state', 'state', delayMs, event, options);
    this.#cancel(this.#state);
    this.#state = slot;
  }

  cancelState(): void {
    this.#cancel(this.#state);
    this.#state = null;
  }

  setEvent(delayMs: number, event: EventObject, options?: TimeoutOptions): void {
    const slot = this.#start('event', 'event', delayMs, event, options);
    this.#cancel(this.#event);
    this.#event = slot;
  }

  cancelEvent(): void {
    if (this.#event === null) return;
    this.#cancel(this.#event);
    this.#event = null;
  }

  setGeneric(name: unknown, delayMs: number, event: EventObject, options?: TimeoutOptions): void {
    const slot = this.#start('generic', name, delayMs, event, options);
    this.#cancel(this.#generic.get(name) ?? null);
    if (slot === null) this.#generic.delete(name);
    else this.#generic.set(name, slot);
  }

  /**
   * gen_statem's `{timeout, update, Content}` (and its state and generic forms): the running
   * timeout delivers `event` instead, at the same expiry; with none running, `event` is delivered
   * as a zero timeout would be.
   */
  update(kind: 'state' | 'event' | 'generic', name: unknown, event: EventObject): void {
    const slot = kind === 'state' ? this.#state : kind === 'event' ? this.#event : (this.#generic.get(name) ?? null);
    if (slot !== null) {
      slot.message.event = event;
      return;
    }
    if (kind === 'state') this.setState(0, event);
    else if (kind === 'event') this.setEvent(0, event);
    else this.setGeneric(name, 0, event);
  }

  cancelGeneric(name: unknown): void {
    this.#cancel(this.#generic.get(name) ?? null);
    this.#generic.delete(name);
  }

  /** xstate's delayed send; `id` is its send id (`cancel(id)`), absent for anonymous sends. */
  setDelayed(id: string | undefined, delayMs: number, event: EventObject): void {
    const key = id ?? `molo.anonymous.${++delayedIds}`;
    const slot = this.#start('delayed', key, delayMs, event, undefined);
    this.#cancel(this.#delayed.get(key) ?? null);
    if (slot === null) this.#delayed.delete(key);
    else this.#delayed.set(key, slot);
  }

  cancelDelayed(id: string): void {
    this.#cancel(this.#delayed.get(id) ?? null);
    this.#delayed.delete(id);
  }

  /** The event of a fired timeout that is still current (and no longer pending), or undefined if stale. */
  claim(message: TimeoutFired): EventObject | undefined {
    switch (message.kind) {
      case 'state':
        if (this.#state?.message !== message) return undefined;
        this.#state = null;
        return message.event;
      case 'event':
        if (this.#event?.message !== message) return undefined;
        this.#event = null;
        return message.event;
      case 'generic':
        return this.#claimKeyed(this.#generic, message);
      case 'delayed':
        return this.#claimKeyed(this.#delayed, message);
      default: {
        const never: never = message.kind;
        throw new TypeError(`unknown timeout kind ${String(never)}`);
      }
    }
  }

  #claimKeyed(slots: Map<unknown, Slot>, message: TimeoutFired): EventObject | undefined {
    if (slots.get(message.key)?.message !== message) return undefined;
    slots.delete(message.key);
    return message.event;
  }

  #start(kind: TimeoutKind, key: unknown, time: number, event: EventObject, options: TimeoutOptions | undefined): Slot | null {
    const delayMs = options?.absolute === true ? absoluteDelay(kind, time, this.ctx.now()) : time;
    checkDelay(kind, delayMs);
    if (delayMs === Infinity) return null;
    const message = new TimeoutFired(kind, key, event);
    if (delayMs === 0) {
      this.enqueue(message);
      return { entry: null, message };
    }
    return { entry: this.ctx.sendAfter(delayMs, message), message };
  }

  #cancel(slot: Slot | null): void {
    if (slot !== null && slot.entry !== null) this.ctx.cancelTimer(slot.entry);
  }
}

/** An absolute time as a delay from `now`; a time already past is due at once (0). */
function absoluteDelay(kind: TimeoutKind, at: number, now: number): number {
  if (typeof at !== 'number' || Number.isNaN(at)) throw new InvalidTimeout(kind, at);
  return at === Infinity ? Infinity : Math.max(0, at - now);
}

function checkDelay(kind: TimeoutKind, delayMs: number): void {
  if (typeof delayMs !== 'number' || !(delayMs >= 0) || (delayMs > MAX_TIMEOUT_MS && delayMs !== Infinity)) {
    throw new InvalidTimeout(kind, delayMs);
  }
}
