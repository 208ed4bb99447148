import type { AnyActorRef, EventObject } from 'xstate';
import type { ActorContext, ExitReason } from '../../actors/index.js';
import { NotInStateMachine } from '../errors.js';

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
  /** Delivers `event` (default `{ type: 'state_timeout' }`) after `delayMs` unless the state changes first. */
  stateTimeout<E extends EventObject>(delayMs: number, event?: E): void;
  /** Delivers `event` (default `{ type: 'event_timeout' }`) after `delayMs` unless any event arrives first. */
  eventTimeout<E extends EventObject>(delayMs: number, event?: E): void;
  /** Delivers `event` (default `{ type: name }`) after `delayMs`; replaces the timeout of that name. */
  genericTimeout<E extends EventObject>(name: string, delayMs: number, event?: E): void;
  cancelTimeout(name: string): void;
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
