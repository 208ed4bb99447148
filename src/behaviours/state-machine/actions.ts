/**
 * gen_statem's transition actions as xstate actions. Use them anywhere xstate takes an action
 * (`entry`, `exit`, a transition's `actions`, `setup({ actions })`); they act on the StateMachine
 * actor that runs the machine, and throw NotInStateMachine in a machine run any other way.
 */
import type { ActionArgs, ActionFunction, DoNotInfer, EventObject, MachineContext, ParameterizedObject } from 'xstate';
import { CallRequest } from '../../actors/index.js';
import { hostOf, type StateMachineActor } from './host.js';
import type { TimeoutOptions } from './timeouts.js';

type Params = ParameterizedObject['params'] | undefined;

/** A value, or a function of the action's args (and params) that computes it. */
export type ActionExpr<
  T,
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
> =
  | T
  | ((args: ActionArgs<TContext, TExpressionEvent, TEvent>, params: TParams) => T);

/** The type of every action this module makes: it neither spawns, nor guards, nor delays. */
export type StateMachineAction<
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
> = ActionFunction<TContext, TExpressionEvent, TEvent, TParams, never, never, never, never, never>;

function resolve<
  T,
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
>(
  expr: ActionExpr<T, TContext, TExpressionEvent, TParams, TEvent>,
  args: ActionArgs<TContext, TExpressionEvent, TEvent>,
  params: TParams,
): T {
  return typeof expr === 'function' ? (expr as (a: typeof args, p: TParams) => T)(args, params) : expr;
}

/** Names the action as xstate's inspection shows it. */
function named<F extends (...args: never[]) => void>(name: string, action: F): F {
  Object.defineProperty(action, 'name', { value: name });
  return action;
}

/**
 * Replies to a call: `from` is the `from` of a call event. Later replies, replies after the caller
 * timed out, and replies to `undefined` (the event came as a cast) are ignored.
 */
export function reply<Reply>(from: CallRequest<unknown, Reply> | undefined, value: Reply): void {
  from?.reply(value);
}

/**
 * Replies to the event being handled, if it came as a call (a cast gets nothing). Pass the value, or
 * a function of the action's args that computes it (to reply with a function, compute it).
 */
export function replyWith<
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
>(
  compute: (args: ActionArgs<TContext, TExpressionEvent, TEvent>, params: TParams) => unknown,
): StateMachineAction<TContext, TExpressionEvent, TParams, TEvent>;
export function replyWith<
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
>(value: unknown): StateMachineAction<TContext, TExpressionEvent, TParams, TEvent>;
export function replyWith<
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
>(value: unknown): StateMachineAction<TContext, TExpressionEvent, TParams, TEvent> {
  return named('molo.reply', (args: ActionArgs<TContext, TExpressionEvent, TEvent>, params: TParams) => {
    const from: unknown = (args.event as { from?: unknown }).from;
    if (from instanceof CallRequest) from.reply(resolve(value, args, params));
  });
}

/**
 * Runs a side effect with the actor: its kernel context (`actor.ctx`) and gen_statem's transition
 * actions. This is the hook for enter actions that must send, call, spawn or monitor. An async
 * effect holds the next event until it settles (as an async GenServer callback holds the next
 * message); a rejection crashes the actor. The machine's state has already changed by then.
 */
export function effect<
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
>(
  run: (actor: StateMachineActor, args: ActionArgs<TContext, TExpressionEvent, TEvent>, params: TParams) => unknown,
): StateMachineAction<TContext, TExpressionEvent, TParams, TEvent> {
  return named('molo.effect', (args: ActionArgs<TContext, TExpressionEvent, TEvent>, params: TParams) => {
    const actor = hostOf(args, 'effect()');
    const result = run(actor, args, params);
    if (result !== undefined && result !== null && typeof (result as PromiseLike<unknown>).then === 'function') {
      actor.awaitEffect(result as PromiseLike<unknown>);
    }
  });
}

/** gen_statem `postpone`: keeps the event being handled until the state changes, then retries it. */
export function postpone<
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
>(): StateMachineAction<TContext, TExpressionEvent, TParams, TEvent> {
  return named('molo.postpone', (args: ActionArgs<TContext, TExpressionEvent, TEvent>) => hostOf(args, 'postpone()').postpone());
}

/** gen_statem `next_event`: handles `event` right after this transition, before any queued message. */
export function nextEvent<
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
>(
  event: ActionExpr<DoNotInfer<TEvent>, TContext, TExpressionEvent, TParams, TEvent>,
): StateMachineAction<TContext, TExpressionEvent, TParams, TEvent> {
  return named('molo.nextEvent', (args: ActionArgs<TContext, TExpressionEvent, TEvent>, params: TParams) =>
    hostOf(args, 'nextEvent()').nextEvent(resolve(event, args, params)),
  );
}

/** `stateTimeout` and `eventTimeout` differ only in the host call they make: one maker for both. */
function delayTimeout(kind: 'stateTimeout' | 'eventTimeout') {
  return <TContext extends MachineContext, TExpressionEvent extends EventObject, TParams extends Params, TEvent extends EventObject>(
    delayMs: ActionExpr<number, TContext, TExpressionEvent, TParams, TEvent>,
    event?: ActionExpr<DoNotInfer<TEvent>, TContext, TExpressionEvent, TParams, TEvent>,
    options?: TimeoutOptions,
  ): StateMachineAction<TContext, TExpressionEvent, TParams, TEvent> =>
    named(`molo.${kind}`, (args: ActionArgs<TContext, TExpressionEvent, TEvent>, params: TParams) =>
      hostOf(args, `${kind}()`)[kind](resolve(delayMs, args, params), event === undefined ? undefined : resolve(event, args, params), options),
    );
}

/**
 * gen_statem `state_timeout`: delivers `event` (default `{ type: 'state_timeout' }`) after `delayMs`
 * unless the state changes first. Setting it again replaces it; `Infinity` cancels it.
 */
export const stateTimeout = delayTimeout('stateTimeout');

/**
 * gen_statem's event timeout: delivers `event` (default `{ type: 'event_timeout' }`) after `delayMs`
 * unless any event arrives first (including inserted and postponed ones).
 */
export const eventTimeout = delayTimeout('eventTimeout');

/**
 * gen_statem's generic timeout `{timeout, Name}`: delivers `event` (default `{ type: name }`) after
 * `delayMs`. Neither state changes nor events cancel it; setting the same name again replaces it.
 */
export function genericTimeout<
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
>(
  name: unknown,
  delayMs: ActionExpr<number, TContext, TExpressionEvent, TParams, TEvent>,
  event?: ActionExpr<DoNotInfer<TEvent>, TContext, TExpressionEvent, TParams, TEvent>,
  options?: TimeoutOptions,
): StateMachineAction<TContext, TExpressionEvent, TParams, TEvent> {
  return named('molo.genericTimeout', (args: ActionArgs<TContext, TExpressionEvent, TEvent>, params: TParams) =>
    hostOf(args, 'genericTimeout()').genericTimeout(
      name,
      resolve(delayMs, args, params),
      event === undefined ? undefined : resolve(event, args, params),
      options,
    ),
  );
}

/**
 * gen_statem's `{timeout, update, Content}` family: the running timeout of `kind` (for `generic`,
 * the one named `name`) delivers `event` instead, at the same expiry; with none running, `event`
 * is delivered as a zero timeout.
 */
export function updateTimeout<
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
>(
  kind: 'state' | 'event' | 'generic',
  event: ActionExpr<DoNotInfer<TEvent>, TContext, TExpressionEvent, TParams, TEvent>,
  name?: unknown,
): StateMachineAction<TContext, TExpressionEvent, TParams, TEvent> {
  return named('molo.updateTimeout', (args: ActionArgs<TContext, TExpressionEvent, TEvent>, params: TParams) =>
    hostOf(args, 'updateTimeout()').updateTimeout(kind, resolve(event, args, params), name),
  );
}

/** Cancels the generic timeout `name`, if it is pending. */
export function cancelTimeout<
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
>(name: unknown): StateMachineAction<TContext, TExpressionEvent, TParams, TEvent> {
  return named('molo.cancelTimeout', (args: ActionArgs<TContext, TExpressionEvent, TEvent>) =>
    hostOf(args, 'cancelTimeout()').cancelTimeout(name),
  );
}

/** Cancels the state timeout, if it is pending. */
export function cancelStateTimeout<
  TContext extends MachineContext,
  TExpressionEvent extends EventObject,
  TParams extends Params,
  TEvent extends EventObject,
>(): StateMachineAction<TContext, TExpressionEvent, TParams, TEvent> {
  return named('molo.cancelStateTimeout', (args: ActionArgs<TContext, TExpressionEvent, TEvent>) =>
    hostOf(args, 'cancelStateTimeout()').cancelStateTimeout(),
  );
}
