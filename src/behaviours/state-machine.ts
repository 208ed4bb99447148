/**
 * StateMachine: OTP's gen_statem on an xstate v5 machine. The machine is the logic (states, guards,
 * context, entry actions); this behaviour is the runner that feeds it the actor's mailbox and adds
 * what gen_statem has and xstate leaves to its host: calls with replies, state/event/generic
 * timeouts on the actor's timers, postponed and inserted events, and the actor's lifecycle.
 *
 * ```ts
 * const door = setup({ types: { events: {} as DoorEvent } }).createMachine({ ... });
 * const ref = await StateMachine.start(system, { machine: door });
 * await StateMachine.call(system, ref, { type: 'open' });
 * ```
 */
import type { AnyStateMachine, EventFromLogic, InputFrom } from 'xstate';
import type { ActorBehaviour, ActorRuntime, CallRequest, ExitReason, Ref } from '../actors/index.js';
import { startActor } from './start-actor.js';
import { resolveDefinition, type StateMachineDefinition, type StateMachineStartOptions } from './state-machine/definition.js';
import { StateMachineRunner, StateQuery, type StateMachineStatus } from './state-machine/runner.js';
import { requestStop } from './stop-request.js';

const STATE_QUERY = new StateQuery();

/** A ref known to run a StateMachine of `TMachine`, so `getState` is typed. */
export type StateMachineRef<TMachine extends AnyStateMachine = AnyStateMachine> = Ref & { readonly __machine?: TMachine };

type ContextOf<TMachine extends AnyStateMachine> = ReturnType<TMachine['getInitialSnapshot']>['context'];

/**
 * The actor behaviour for `definition`, to spawn it yourself (`ctx.spawnLink(...)`, a supervisor's
 * start function). `parent`: an EXIT from it makes a trapping machine stop (default: the spawner).
 */
function behaviour<TMachine extends AnyStateMachine>(
  definition: StateMachineDefinition<TMachine>,
  input?: InputFrom<TMachine>,
  parent?: Ref,
): ActorBehaviour<unknown> {
  return new StateMachineRunner(resolveDefinition(definition), input, parent);
}

/**
 * Spawns an actor running `definition.machine`; resolves once the initial state is entered (its
 * entry actions, async effects and inserted events done); rejects with StartFailed, once the actor
 * has exited (as GenServer and Supervisor), if that threw, the machine was already final, or
 * `timeoutMs` passed first (reason `timeout`, the actor killed). Options: `name`, `link` (the
 * parent), `mailbox`, `trapExit`, `input`, `timeoutMs`.
 */
function start<TMachine extends AnyStateMachine>(
  system: ActorRuntime,
  definition: StateMachineDefinition<TMachine>,
  options: StateMachineStartOptions<InputFrom<TMachine>> = {},
): Promise<StateMachineRef<TMachine>> {
  let runner: ActorBehaviour<unknown>;
  try {
    runner = behaviour(definition, options.input, options.link);
  } catch (error) {
    return Promise.reject(error);
  }
  return startActor(system, runner, options, { timeoutMs: options.timeoutMs }) as Promise<StateMachineRef<TMachine>>;
}

type MachineEvent<TMachine extends AnyStateMachine> = EventFromLogic<TMachine>;
/** An event as a sender writes it: `from` is added by the kernel for calls. */
export type SentEvent<E> = E extends unknown ? Omit<E, 'from'> : never;
type EventOfType<TMachine extends AnyStateMachine, TType> = Extract<MachineEvent<TMachine>, { readonly type: TType }>;
/** The reply type a call event declares with `CallEvent<E, Reply>` (unknown if it does not). */
export type EventReply<E> = E extends { readonly from?: CallRequest<unknown, infer Reply> } ? Reply : unknown;

/**
 * Sends `event` as a call; the machine answers with `reply(event.from, value)` or `replyWith(value)`.
 * With a typed ref (from `start`) the event is checked and the reply typed by its `CallEvent`.
 * Rejects with CallTimeout, CalleeExited or NoProc, as every kernel call does.
 */
function call<TMachine extends AnyStateMachine, const TEvent extends SentEvent<MachineEvent<TMachine>>>(
  system: ActorRuntime,
  target: StateMachineRef<TMachine> | string,
  event: TEvent,
  timeoutMs?: number,
): Promise<EventReply<EventOfType<TMachine, TEvent['type']>>> {
  return system.call(target, event, timeoutMs);
}

/** Sends `event` without waiting (gen_statem's cast); it is the same as `system.send`. */
function cast<TMachine extends AnyStateMachine>(
  system: ActorRuntime,
  target: StateMachineRef<TMachine> | string,
  event: NoInfer<SentEvent<MachineEvent<TMachine>>>,
): void {
  system.send(target, event);
}

/** OTP's `sys:get_state`: the machine's state value, context and postponed count. Not an event. */
function getState<TMachine extends AnyStateMachine = AnyStateMachine>(
  system: ActorRuntime,
  target: StateMachineRef<TMachine> | string,
  timeoutMs?: number,
): Promise<StateMachineStatus<ContextOf<TMachine>>> {
  return system.call<StateMachineStatus<ContextOf<TMachine>>>(target, STATE_QUERY, timeoutMs);
}

/**
 * OTP's `gen_statem:stop`: the machine runs `terminate` and exits with `reason`; resolves with its
 * exit reason. With `timeoutMs`, rejects with StopTimeout if it has not exited by then.
 */
function stop(system: ActorRuntime, target: Ref | string, reason: ExitReason = 'normal', timeoutMs?: number): Promise<ExitReason> {
  return requestStop(system, target, reason, timeoutMs);
}

/** gen_statem's API for xstate machines. */
export const StateMachine = Object.freeze({ start, call, cast, getState, stop, behaviour });

export {
  DEFAULT_MAX_INSERTED,
  DEFAULT_MAX_POSTPONED,
  MAX_EVENT_QUEUE_CAP,
  type StateMachineDefinition,
  type StateMachineStartOptions,
} from './state-machine/definition.js';
export { EVENTS_PER_TURN, type StateMachineStatus } from './state-machine/runner.js';
export type { StateMachineActor } from './state-machine/host.js';
export {
  EVENT_TIMEOUT,
  GENERIC_TIMEOUT,
  INFO_EVENT,
  STATE_TIMEOUT,
  type CallEvent,
  type EventTimeoutEvent,
  type GenericTimeoutEvent,
  type InfoEvent,
  type MaybeCallEvent,
  type StateTimeoutEvent,
} from './state-machine/events.js';
export {
  cancelStateTimeout,
  cancelTimeout,
  effect,
  eventTimeout,
  genericTimeout,
  nextEvent,
  postpone,
  reply,
  replyWith,
  stateTimeout,
  updateTimeout,
  type ActionExpr,
  type StateMachineAction,
} from './state-machine/actions.js';
export type { TimeoutOptions } from './state-machine/timeouts.js';
