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
    readonly key: string,
    readonly event: EventObject,
  ) {}
}

interface Slot {
  readonly entry: TimerEntry;
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
  readonly #generic = new Map<string, Slot>();
  readonly #delayed = new Map<string, Slot>();

  constructor(readonly ctx: ActorContext) {}

  /** The current state timeout; the runner compares it across a transition. */
  get stateTimer(): object | null {
    return this.#state;
  }

  setState(delayMs: number, event: EventObject): void {
    const slot = this.#start('state', 'state', delayMs, event);
    this.#cancel(this.#state);
    this.#state = slot;
  }

  cancelState(): void {
    this.#cancel(this.#state);
    this.#state = null;
  }

  setEvent(delayMs: number, event: EventObject): void {
    const slot = this.#start('event', 'event', delayMs, event);
    this.#cancel(this.#event);
    this.#event = slot;
  }

  cancelEvent(): void {
    if (this.#event === null) return;
    this.#cancel(this.#event);
    this.#event = null;
  }

  setGeneric(name: string, delayMs: number, event: EventObject): void {
    const slot = this.#start('generic', name, delayMs, event);
    this.#cancel(this.#generic.get(name) ?? null);
    if (slot === null) this.#generic.delete(name);
    else this.#generic.set(name, slot);
  }

  cancelGeneric(name: string): void {
    this.#cancel(this.#generic.get(name) ?? null);
    this.#generic.delete(name);
  }

  /** xstate's delayed send; `id` is its send id (`cancel(id)`), absent for anonymous sends. */
  setDelayed(id: string | undefined, delayMs: number, event: EventObject): void {
    const key = id ?? `molo.anonymous.${++delayedIds}`;
    const slot = this.#start('delayed', key, delayMs, event);
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

  #claimKeyed(slots: Map<string, Slot>, message: TimeoutFired): EventObject | undefined {
    if (slots.get(message.key)?.message !== message) return undefined;
    slots.delete(message.key);
    return message.event;
  }

  #start(kind: TimeoutKind, key: string, delayMs: number, event: EventObject): Slot | null {
    checkDelay(kind, delayMs);
    if (delayMs === Infinity) return null;
    const message = new TimeoutFired(kind, key, event);
    return { entry: this.ctx.sendAfter(delayMs, message), message };
  }

  #cancel(slot: Slot | null): void {
    if (slot !== null) this.ctx.cancelTimer(slot.entry);
  }
}

function checkDelay(kind: TimeoutKind, delayMs: number): void {
  if (typeof delayMs !== 'number' || !(delayMs >= 0) || (delayMs > MAX_TIMEOUT_MS && delayMs !== Infinity)) {
    throw new InvalidTimeout(kind, delayMs);
  }
}
