import type { EventObject, StateValue } from 'xstate';
import { CallRequest } from '../../actors/index.js';

/** Type of the event a state timeout delivers unless it names its own (gen_statem's `state_timeout`). */
export const STATE_TIMEOUT = 'state_timeout' as const;
/** Type of the event an event timeout delivers unless it names its own (gen_statem's `timeout`). */
export const EVENT_TIMEOUT = 'event_timeout' as const;
/** Type of the event a generic timeout with a non-string name delivers unless it names its own; `name` carries the name. */
export const GENERIC_TIMEOUT = 'generic_timeout' as const;
/** Type of the event a message that is not an event object becomes (gen_statem's `info`). */
export const INFO_EVENT = 'molo.info' as const;

export interface StateTimeoutEvent {
  readonly type: typeof STATE_TIMEOUT;
}

export interface GenericTimeoutEvent<Name = unknown> {
  readonly type: typeof GENERIC_TIMEOUT;
  readonly name: Name;
}

export interface EventTimeoutEvent {
  readonly type: typeof EVENT_TIMEOUT;
}

/** A message that is not an event object (`{ type: string }`), as the machine sees it. */
export interface InfoEvent {
  readonly type: typeof INFO_EVENT;
  readonly message: unknown;
  /** Set when the message came as a call. */
  readonly from?: CallRequest;
}

/**
 * An event that came as a call: `from` is the caller's reply handle (`reply(event.from, value)`).
 * Declare the machine's callable events with it; `from` is reserved on every event.
 */
export type CallEvent<E extends EventObject, Reply = unknown> = E & { readonly from: CallRequest<unknown, Reply> };

/** An event that may come as a call or as a cast: reply with `reply(event.from, value)`, a no-op for casts. */
export type MaybeCallEvent<E extends EventObject, Reply = unknown> = E & {
  readonly from?: CallRequest<unknown, Reply>;
};

export function isEventObject(value: unknown): value is EventObject {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/**
 * What a mailbox message becomes for the machine. Event objects (including the kernel's `EXIT` and
 * `DOWN` messages) pass unchanged; a call's request gets its `from`; anything else becomes an info event.
 */
export function toMachineEvent(message: unknown): EventObject {
  if (message instanceof CallRequest) {
    const request: unknown = message.request;
    const event: EventObject & { readonly from: CallRequest } = isEventObject(request)
      ? { ...request, from: message }
      : infoEvent(request, message);
    return event;
  }
  return isEventObject(message) ? message : infoEvent(message, undefined);
}

function infoEvent(message: unknown, from: CallRequest): InfoEvent & { readonly from: CallRequest };
function infoEvent(message: unknown, from: undefined): InfoEvent;
function infoEvent(message: unknown, from: CallRequest | undefined): InfoEvent {
  return from === undefined ? { type: INFO_EVENT, message } : { type: INFO_EVENT, message, from };
}

/** gen_statem's "state change": the state value differs; context (gen_statem's data) does not count. */
export function sameStateValue(a: StateValue, b: StateValue): boolean {
  if (a === b) return true;
  if (typeof a === 'string' || typeof b === 'string') return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    const left = a[key];
    const right = b[key];
    if (left === undefined || right === undefined) {
      if (left !== right) return false;
    } else if (!sameStateValue(left, right)) return false;
  }
  return true;
}
