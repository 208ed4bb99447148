import type { AnyActorRef, EventObject } from 'xstate';
import type { ActorContext, ExitReason } from '../../actors/index.js';
import { NotInStateMachine } from '../errors.js';
import type { TimeoutOptions } from './timeouts.js';

/**
 * What an action of a hosted machine may do besides changing context: gen_statem's transition
 * actions, plus the actor's own context for side effects. Reach it with {@link effect}; the action
 * creators (`postpone()`, `stateTimeout(...)`, ...) are shorthands for these calls.
 */
export interface StateMachineActor {
  /** The kernel context: `self`, `send`, `call`, `spawnLink`, `monitor`, `sendAfter`, ... */
  readonly ctx: ActorContext;
  /** Keeps the event being handled until the state changes, then retries it (gen_statem `postpone`). */
  postpone(): void;
  /** Handles `event` right after this transition, before any queued message (gen_statem `next_event`). */
  nextEvent<E extends EventObject>(event: E): void;
  /**
   * Delivers `event` (default `{ type: 'state_timeout' }`) after `delayMs` unless the state changes
   * first. 0 queues it after the events already queued, before the mailbox (gen_statem's zero
   * timeout); `{ absolute: true }` reads the time as a point on the actor's clock (`{abs, true}`).
   */
  stateTimeout<E extends EventObject>(delayMs: number, event?: E, options?: TimeoutOptions): void;
  /** Delivers `event` (default `{ type: 'event_timeout' }`) after `delayMs` unless any event arrives first. */
  eventTimeout<E extends EventObject>(delayMs: number, event?: E, options?: TimeoutOptions): void;
  /**
   * Delivers `event` after `delayMs`; replaces the timeout of that name. The name is any value (as
   * gen_statem's term); the default event is `{ type: name }` for a string, `{ type: 'generic_timeout', name }` otherwise.
   */
  genericTimeout<E extends EventObject>(name: unknown, delayMs: number, event?: E, options?: TimeoutOptions): void;
  /** gen_statem's `{timeout, update, Content}`: the running timeout of `kind` (and `name`) delivers `event` instead. */
  updateTimeout<E extends EventObject>(kind: 'state' | 'event' | 'generic', event: E, name?: unknown): void;
  cancelTimeout(name: unknown): void;
  /** The next event waits until `settling` settles; a rejection crashes the actor (used by async `effect`s). */
  awaitEffect(settling: PromiseLike<unknown>): void;
  cancelStateTimeout(): void;
  /** Stops the actor once this transition ends; no further event is handled and `terminate` runs. */
  stop(reason?: ExitReason): void;
}

const hosted = new WeakMap<AnyActorRef, StateMachineActor>();

/** Binds the xstate `self` handle that a runner passes to actions to the runner itself. */
export function bindHost(self: AnyActorRef, actor: StateMachineActor): void {
  hosted.set(self, actor);
}

/** The StateMachine actor running the action whose args are `args`. */
export function hostOf(args: { readonly self: AnyActorRef }, action: string): StateMachineActor {
  const actor = hosted.get(args.self);
  if (actor === undefined) throw new NotInStateMachine(action);
  return actor;
}
