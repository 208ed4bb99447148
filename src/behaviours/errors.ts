/**
 * Error registry of the behaviours. Stable codes, never reused; documented in docs/errors.md.
 */
import { codedError } from '../actors/coded-error.js';
import { formatReason, type ExitReason, type Ref } from '../actors/index.js';

export const BehaviourErrorCode = {
  StartFailed: 'BEHAVIOUR_START_FAILED',
  ChildAlreadyPresent: 'SUP_ALREADY_PRESENT',
  ChildAlreadyStarted: 'SUP_ALREADY_STARTED',
  ChildRunning: 'SUP_RUNNING',
  ChildRestarting: 'SUP_RESTARTING',
  ChildNotFound: 'SUP_NOT_FOUND',
  TooManyChildren: 'SUP_MAX_CHILDREN',
  InvalidChildSpec: 'SUP_INVALID_SPEC',
  InvalidSupervisorSpec: 'SUP_INVALID_FLAGS',
  DynamicOnly: 'SUP_SIMPLE_ONE_FOR_ONE',
  IllegalTransition: 'LIFECYCLE_ILLEGAL_TRANSITION',
  InvalidStateMachine: 'STATEM_INVALID_DEFINITION',
  PostponeLimit: 'STATEM_POSTPONE_LIMIT',
  InsertLimit: 'STATEM_INSERT_LIMIT',
  InvalidTimeout: 'STATEM_INVALID_TIMEOUT',
  UnsupportedMachineFeature: 'STATEM_UNSUPPORTED',
  NotInStateMachine: 'STATEM_NOT_HOSTED',
  NotInTransition: 'STATEM_NOT_IN_TRANSITION',
  InvalidProgramSpec: 'PROGRAM_INVALID_SPEC',
  TooManyPrograms: 'PROGRAM_MAX_PROGRAMS',
  ProgramNotFound: 'PROGRAM_NOT_FOUND',
  ProgramAlreadyStarted: 'PROGRAM_ALREADY_STARTED',
  UndefinedCallback: 'BEHAVIOUR_UNDEF',
  StopTimeout: 'BEHAVIOUR_STOP_TIMEOUT',
  StartIgnored: 'BEHAVIOUR_START_IGNORED',
} as const;
export type BehaviourErrorCode = (typeof BehaviourErrorCode)[keyof typeof BehaviourErrorCode];

/** A behaviour's init failed (threw, or asked to stop); `reason` is what it failed with. */
export class StartFailed extends codedError(BehaviourErrorCode.StartFailed, (reason: ExitReason) => ({
  message: `start failed: ${formatReason(reason)}`,
  fields: { reason },
  options: { cause: reason instanceof Error ? reason : undefined },
})) {}

/** A GenServer whose `init` called `ignore()` (OTP's `ignore`): no server runs. A supervisor records the child as not started instead. */
export class StartIgnored extends codedError(BehaviourErrorCode.StartIgnored, (behaviour: string) => ({
  message: `${behaviour} answered ignore from init: it did not start`,
  fields: { behaviour },
})) {}

/** OTP's `already_present`: the child spec exists but its child is not running. */
export class ChildAlreadyPresent extends codedError(BehaviourErrorCode.ChildAlreadyPresent, (childId: string) => ({
  message: `child '${childId}' is already present (not running)`,
  fields: { reason: 'already_present' as const, childId },
})) {}

/** OTP's `{already_started, Child}`. */
export class ChildAlreadyStarted extends codedError(BehaviourErrorCode.ChildAlreadyStarted, (childId: string, ref: Ref) => ({
  message: `child '${childId}' is already started as ${ref}`,
  fields: { reason: 'already_started' as const, childId, ref },
})) {}

/** OTP's `running`: the operation needs the child stopped first. */
export class ChildRunning extends codedError(BehaviourErrorCode.ChildRunning, (childId: string) => ({
  message: `child '${childId}' is running`,
  fields: { reason: 'running' as const, childId },
})) {}

/** OTP's `restarting`: the child is between a failed restart and its next attempt. */
export class ChildRestarting extends codedError(BehaviourErrorCode.ChildRestarting, (childId: string) => ({
  message: `child '${childId}' is restarting`,
  fields: { reason: 'restarting' as const, childId },
})) {}

/** OTP's `not_found`. */
export class ChildNotFound extends codedError(BehaviourErrorCode.ChildNotFound, (childId: string) => ({
  message: `no child '${childId}'`,
  fields: { reason: 'not_found' as const, childId },
})) {}

/** The supervisor already has `maxChildren` children. */
export class TooManyChildren extends codedError(BehaviourErrorCode.TooManyChildren, (maxChildren: number) => ({
  message: `supervisor is at its cap of children (maxChildren = ${maxChildren})`,
  fields: { maxChildren },
})) {}

/** A child spec field is invalid: `field` names it and `value` is what was given (OTP's `{invalid_restart_type, V}` &c.). */
export class InvalidChildSpec extends codedError(BehaviourErrorCode.InvalidChildSpec, (childId: string | undefined, detail: string, field?: string, value?: unknown) => ({
  message: `invalid child spec${childId === undefined ? '' : ` '${childId}'`}: ${detail}`,
  fields: { childId, field, value },
})) {}

/** A supervisor flag is invalid: `option` names it and `value` is what was given (OTP's `{invalid_intensity, V}` &c.). */
export class InvalidSupervisorSpec extends codedError(BehaviourErrorCode.InvalidSupervisorSpec, (option: string, detail: string, value?: unknown) => ({
  message: `invalid supervisor option ${option}: ${detail}`,
  fields: { option, value },
})) {}

/** OTP's `simple_one_for_one`: the operation does not apply to a dynamic supervisor (or only to one). */
export class DynamicOnly extends codedError(BehaviourErrorCode.DynamicOnly, (operation: string) => ({
  message: `${operation} is not available for this supervisor's strategy`,
  fields: { reason: 'simple_one_for_one' as const },
})) {}

/** A lifecycle event that the child lifecycle machine does not allow in the current state. */
export class IllegalTransition extends codedError(BehaviourErrorCode.IllegalTransition, (state: string, event: string) => ({
  message: `lifecycle event ${event} is not allowed in state ${state}`,
  fields: { state, event },
})) {}

/** A StateMachine definition or start option is invalid; `option` names the setting (and so the cap). */
export class InvalidStateMachineDefinition extends codedError(BehaviourErrorCode.InvalidStateMachine, (option: string, detail: string, value?: unknown) => ({
  message: `invalid state machine option ${option}: ${detail}`,
  fields: { option, value },
})) {}

/** A state machine postponed more events than `maxPostponed` allows. */
export class PostponeLimitReached extends codedError(BehaviourErrorCode.PostponeLimit, (cap: number) => ({
  message: `cannot postpone: ${cap} events are already postponed (maxPostponed = ${cap})`,
  fields: { option: 'maxPostponed' as const, cap },
})) {}

/** A state machine inserted more waiting events (`nextEvent`) than `maxInserted` allows. */
export class InsertLimitReached extends codedError(BehaviourErrorCode.InsertLimit, (cap: number) => ({
  message: `cannot insert an event: ${cap} inserted events are waiting (maxInserted = ${cap})`,
  fields: { option: 'maxInserted' as const, cap },
})) {}

/** A state machine timeout was given a delay outside 0..MAX_TIMEOUT_MS (or Infinity). */
export class InvalidTimeout extends codedError(BehaviourErrorCode.InvalidTimeout, (kind: string, delayMs: unknown) => ({
  message: `invalid ${kind} timeout: ${String(delayMs)} ms`,
  fields: { kind, delayMs },
})) {}

/** The machine used an xstate feature a StateMachine actor does not host (child actors, sendTo others). */
export class UnsupportedMachineFeature extends codedError(BehaviourErrorCode.UnsupportedMachineFeature, (feature: string, detail: string) => ({
  message: `${feature} is not supported in a StateMachine actor: ${detail}`,
  fields: { feature },
})) {}

/** A StateMachine action ran in a machine that no StateMachine actor hosts (say, xstate's createActor). */
export class NotInStateMachine extends codedError(BehaviourErrorCode.NotInStateMachine, (action: string) => ({
  message: `${action} only works in a machine run by StateMachine.start`,
  fields: { action },
})) {}

/** A transition action (postpone, nextEvent) ran outside a transition that handles an event. */
export class NotInTransition extends codedError(BehaviourErrorCode.NotInTransition, (action: string) => ({
  message: `${action} can only run in a transition that handles an event (postpone: not in the initial transition)`,
  fields: { action },
})) {}

/** A program spec (or the program supervisor's spec) is invalid; `option` names the setting (and so the cap). */
export class InvalidProgramSpec extends codedError(BehaviourErrorCode.InvalidProgramSpec, (program: string | undefined, option: string, detail: string) => ({
  message: `invalid program spec${program === undefined ? '' : ` '${program}'`}: ${option} ${detail}`,
  fields: { program, option },
})) {}

/** A program supervisor was given more programs than `maxPrograms` (at most 64, S7-10). */
export class TooManyPrograms extends codedError(BehaviourErrorCode.TooManyPrograms, (maxPrograms: number, requested: number) => ({
  message: `${requested} programs exceed the cap of a program supervisor (maxPrograms = ${maxPrograms})`,
  fields: { option: 'maxPrograms' as const, maxPrograms, requested },
})) {}

/** No program of that name in this program supervisor. */
export class ProgramNotFound extends codedError(BehaviourErrorCode.ProgramNotFound, (program: string) => ({
  message: `no program '${program}'`,
  fields: { program },
})) {}

/** supervisord's ALREADY_STARTED: the program is starting, running or waiting to restart. */
export class ProgramAlreadyStarted extends codedError(BehaviourErrorCode.ProgramAlreadyStarted, (program: string, state: string) => ({
  message: `program '${program}' is already started (state ${state})`,
  fields: { program, state },
})) {}

/** OTP's `undef`: a message reached a callback the behaviour does not define (a cast without `handleCast`). */
export class UndefinedCallback extends codedError(BehaviourErrorCode.UndefinedCallback, (behaviour: string, callback: string) => ({
  message: `${behaviour} has no ${callback}: the message cannot be handled`,
  fields: { behaviour, callback },
})) {}

/** A stop with a timeout (`GenServer.stop(..., timeoutMs)`) saw no exit in time (OTP's `exit(timeout)`). */
export class StopTimeout extends codedError(BehaviourErrorCode.StopTimeout, (target: Ref | string, timeoutMs: number) => ({
  message: `${String(target)} did not exit within ${timeoutMs} ms of the stop request`,
  fields: { target, timeoutMs },
})) {}
