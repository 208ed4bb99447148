/**
 * Error registry of the behaviours. Stable codes, never reused; documented in docs/errors.md.
 */
import { formatReason, MoloError, type ExitReason, type Ref } from '../actors/index.js';

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
export class StartFailed extends MoloError {
  static readonly code = BehaviourErrorCode.StartFailed;
  constructor(readonly reason: ExitReason) {
    super(BehaviourErrorCode.StartFailed, `start failed: ${formatReason(reason)}`, {
      cause: reason instanceof Error ? reason : undefined,
    });
  }
}

/** A GenServer whose `init` called `ignore()` (OTP's `ignore`): no server runs. A supervisor records the child as not started instead. */
export class StartIgnored extends MoloError {
  static readonly code = BehaviourErrorCode.StartIgnored;
  constructor(readonly behaviour: string) {
    super(BehaviourErrorCode.StartIgnored, `${behaviour} answered ignore from init: it did not start`);
  }
}

/** OTP's `already_present`: the child spec exists but its child is not running. */
export class ChildAlreadyPresent extends MoloError {
  static readonly code = BehaviourErrorCode.ChildAlreadyPresent;
  readonly reason = 'already_present';
  constructor(readonly childId: string) {
    super(BehaviourErrorCode.ChildAlreadyPresent, `child '${childId}' is already present (not running)`);
  }
}

/** OTP's `{already_started, Child}`. */
export class ChildAlreadyStarted extends MoloError {
  static readonly code = BehaviourErrorCode.ChildAlreadyStarted;
  readonly reason = 'already_started';
  constructor(
    readonly childId: string,
    readonly ref: Ref,
  ) {
    super(BehaviourErrorCode.ChildAlreadyStarted, `child '${childId}' is already started as ${ref}`);
  }
}

/** OTP's `running`: the operation needs the child stopped first. */
export class ChildRunning extends MoloError {
  static readonly code = BehaviourErrorCode.ChildRunning;
  readonly reason = 'running';
  constructor(readonly childId: string) {
    super(BehaviourErrorCode.ChildRunning, `child '${childId}' is running`);
  }
}

/** OTP's `restarting`: the child is between a failed restart and its next attempt. */
export class ChildRestarting extends MoloError {
  static readonly code = BehaviourErrorCode.ChildRestarting;
  readonly reason = 'restarting';
  constructor(readonly childId: string) {
    super(BehaviourErrorCode.ChildRestarting, `child '${childId}' is restarting`);
  }
}

/** OTP's `not_found`. */
export class ChildNotFound extends MoloError {
  static readonly code = BehaviourErrorCode.ChildNotFound;
  readonly reason = 'not_found';
  constructor(readonly childId: string) {
    super(BehaviourErrorCode.ChildNotFound, `no child '${childId}'`);
  }
}

/** The supervisor already has `maxChildren` children. */
export class TooManyChildren extends MoloError {
  static readonly code = BehaviourErrorCode.TooManyChildren;
  constructor(readonly maxChildren: number) {
    super(BehaviourErrorCode.TooManyChildren, `supervisor is at its cap of children (maxChildren = ${maxChildren})`);
  }
}

/** A child spec field is invalid: `field` names it and `value` is what was given (OTP's `{invalid_restart_type, V}` &c.). */
export class InvalidChildSpec extends MoloError {
  static readonly code = BehaviourErrorCode.InvalidChildSpec;
  constructor(
    readonly childId: string | undefined,
    detail: string,
    readonly field?: string,
    readonly value?: unknown,
  ) {
    super(BehaviourErrorCode.InvalidChildSpec, `invalid child spec${childId === undefined ? '' : ` '${childId}'`}: ${detail}`);
  }
}

/** A supervisor flag is invalid: `option` names it and `value` is what was given (OTP's `{invalid_intensity, V}` &c.). */
export class InvalidSupervisorSpec extends MoloError {
  static readonly code = BehaviourErrorCode.InvalidSupervisorSpec;
  constructor(
    readonly option: string,
    detail: string,
    readonly value?: unknown,
  ) {
    super(BehaviourErrorCode.InvalidSupervisorSpec, `invalid supervisor option ${option}: ${detail}`);
  }
}

/** OTP's `simple_one_for_one`: the operation does not apply to a dynamic supervisor (or only to one). */
export class DynamicOnly extends MoloError {
  static readonly code = BehaviourErrorCode.DynamicOnly;
  readonly reason = 'simple_one_for_one';
  constructor(operation: string) {
    super(BehaviourErrorCode.DynamicOnly, `${operation} is not available for this supervisor's strategy`);
  }
}

/** A lifecycle event that the child lifecycle machine does not allow in the current state. */
export class IllegalTransition extends MoloError {
  static readonly code = BehaviourErrorCode.IllegalTransition;
  constructor(
    readonly state: string,
    readonly event: string,
  ) {
    super(BehaviourErrorCode.IllegalTransition, `lifecycle event ${event} is not allowed in state ${state}`);
  }
}

/** A StateMachine definition or start option is invalid; `option` names the setting (and so the cap). */
export class InvalidStateMachineDefinition extends MoloError {
  static readonly code = BehaviourErrorCode.InvalidStateMachine;
  constructor(
    readonly option: string,
    detail: string,
    readonly value?: unknown,
  ) {
    super(BehaviourErrorCode.InvalidStateMachine, `invalid state machine option ${option}: ${detail}`);
  }
}

/** A state machine postponed more events than `maxPostponed` allows. */
export class PostponeLimitReached extends MoloError {
  static readonly code = BehaviourErrorCode.PostponeLimit;
  readonly option = 'maxPostponed';
  constructor(readonly cap: number) {
    super(BehaviourErrorCode.PostponeLimit, `cannot postpone: ${cap} events are already postponed (maxPostponed = ${cap})`);
  }
}

/** A state machine inserted more waiting events (`nextEvent`) than `maxInserted` allows. */
export class InsertLimitReached extends MoloError {
  static readonly code = BehaviourErrorCode.InsertLimit;
  readonly option = 'maxInserted';
  constructor(readonly cap: number) {
    super(BehaviourErrorCode.InsertLimit, `cannot insert an event: ${cap} inserted events are waiting (maxInserted = ${cap})`);
  }
}

/** A state machine timeout was given a delay outside 0..MAX_TIMEOUT_MS (or Infinity). */
export class InvalidTimeout extends MoloError {
  static readonly code = BehaviourErrorCode.InvalidTimeout;
  constructor(
    readonly kind: string,
    readonly delayMs: unknown,
  ) {
    super(BehaviourErrorCode.InvalidTimeout, `invalid ${kind} timeout: ${String(delayMs)} ms`);
  }
}

/** The machine used an xstate feature a StateMachine actor does not host (child actors, sendTo others). */
export class UnsupportedMachineFeature extends MoloError {
  static readonly code = BehaviourErrorCode.UnsupportedMachineFeature;
  constructor(
    readonly feature: string,
    detail: string,
  ) {
    super(BehaviourErrorCode.UnsupportedMachineFeature, `${feature} is not supported in a StateMachine actor: ${detail}`);
  }
}

/** A StateMachine action ran in a machine that no StateMachine actor hosts (say, xstate's createActor). */
export class NotInStateMachine extends MoloError {
  static readonly code = BehaviourErrorCode.NotInStateMachine;
  constructor(readonly action: string) {
    super(BehaviourErrorCode.NotInStateMachine, `${action} only works in a machine run by StateMachine.start`);
  }
}

/** A transition action (postpone, nextEvent) ran outside a transition that handles an event. */
export class NotInTransition extends MoloError {
  static readonly code = BehaviourErrorCode.NotInTransition;
  constructor(readonly action: string) {
    super(
      BehaviourErrorCode.NotInTransition,
      `${action} can only run in a transition that handles an event (postpone: not in the initial transition)`,
    );
  }
}

/** A program spec (or the program supervisor's spec) is invalid; `option` names the setting (and so the cap). */
export class InvalidProgramSpec extends MoloError {
  static readonly code = BehaviourErrorCode.InvalidProgramSpec;
  constructor(
    readonly program: string | undefined,
    readonly option: string,
    detail: string,
  ) {
    super(
      BehaviourErrorCode.InvalidProgramSpec,
      `invalid program spec${program === undefined ? '' : ` '${program}'`}: ${option} ${detail}`,
    );
  }
}

/** A program supervisor was given more programs than `maxPrograms` (at most 64, S7-10). */
export class TooManyPrograms extends MoloError {
  static readonly code = BehaviourErrorCode.TooManyPrograms;
  readonly option = 'maxPrograms';
  constructor(
    readonly maxPrograms: number,
    readonly requested: number,
  ) {
    super(BehaviourErrorCode.TooManyPrograms, `${requested} programs exceed the cap of a program supervisor (maxPrograms = ${maxPrograms})`);
  }
}

/** No program of that name in this program supervisor. */
export class ProgramNotFound extends MoloError {
  static readonly code = BehaviourErrorCode.ProgramNotFound;
  constructor(readonly program: string) {
    super(BehaviourErrorCode.ProgramNotFound, `no program '${program}'`);
  }
}

/** supervisord's ALREADY_STARTED: the program is starting, running or waiting to restart. */
export class ProgramAlreadyStarted extends MoloError {
  static readonly code = BehaviourErrorCode.ProgramAlreadyStarted;
  constructor(
    readonly program: string,
    readonly state: string,
  ) {
    super(BehaviourErrorCode.ProgramAlreadyStarted, `program '${program}' is already started (state ${state})`);
  }
}

/** OTP's `undef`: a message reached a callback the behaviour does not define (a cast without `handleCast`). */
export class UndefinedCallback extends MoloError {
  static readonly code = BehaviourErrorCode.UndefinedCallback;
  constructor(
    readonly behaviour: string,
    readonly callback: string,
  ) {
    super(BehaviourErrorCode.UndefinedCallback, `${behaviour} has no ${callback}: the message cannot be handled`);
  }
}

/** A stop with a timeout (`GenServer.stop(..., timeoutMs)`) saw no exit in time (OTP's `exit(timeout)`). */
export class StopTimeout extends MoloError {
  static readonly code = BehaviourErrorCode.StopTimeout;
  constructor(
    readonly target: Ref | string,
    readonly timeoutMs: number,
  ) {
    super(BehaviourErrorCode.StopTimeout, `${String(target)} did not exit within ${timeoutMs} ms of the stop request`);
  }
}
