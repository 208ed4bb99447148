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
} as const;
export type BehaviourErrorCode = (typeof BehaviourErrorCode)[keyof typeof BehaviourErrorCode];

/** A behaviour's init failed (threw, or asked to stop); `reason` is what it failed with. */
export class StartFailed extends MoloError {
  constructor(readonly reason: ExitReason) {
    super(BehaviourErrorCode.StartFailed, `start failed: ${formatReason(reason)}`, {
      cause: reason instanceof Error ? reason : undefined,
    });
  }
}

/** OTP's `already_present`: the child spec exists but its child is not running. */
export class ChildAlreadyPresent extends MoloError {
  readonly reason = 'already_present';
  constructor(readonly childId: string) {
    super(BehaviourErrorCode.ChildAlreadyPresent, `child '${childId}' is already present (not running)`);
  }
}

/** OTP's `{already_started, Child}`. */
export class ChildAlreadyStarted extends MoloError {
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
  readonly reason = 'running';
  constructor(readonly childId: string) {
    super(BehaviourErrorCode.ChildRunning, `child '${childId}' is running`);
  }
}

/** OTP's `restarting`: the child is between a failed restart and its next attempt. */
export class ChildRestarting extends MoloError {
  readonly reason = 'restarting';
  constructor(readonly childId: string) {
    super(BehaviourErrorCode.ChildRestarting, `child '${childId}' is restarting`);
  }
}

/** OTP's `not_found`. */
export class ChildNotFound extends MoloError {
  readonly reason = 'not_found';
  constructor(readonly childId: string) {
    super(BehaviourErrorCode.ChildNotFound, `no child '${childId}'`);
  }
}

/** The supervisor already has `maxChildren` children. */
export class TooManyChildren extends MoloError {
  constructor(readonly maxChildren: number) {
    super(BehaviourErrorCode.TooManyChildren, `supervisor is at its cap of children (maxChildren = ${maxChildren})`);
  }
}

export class InvalidChildSpec extends MoloError {
  constructor(
    readonly childId: string | undefined,
    detail: string,
  ) {
    super(BehaviourErrorCode.InvalidChildSpec, `invalid child spec${childId === undefined ? '' : ` '${childId}'`}: ${detail}`);
  }
}

export class InvalidSupervisorSpec extends MoloError {
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(BehaviourErrorCode.InvalidSupervisorSpec, `invalid supervisor option ${option}: ${detail}`);
  }
}

/** OTP's `simple_one_for_one`: the operation does not apply to a dynamic supervisor (or only to one). */
export class DynamicOnly extends MoloError {
  readonly reason = 'simple_one_for_one';
  constructor(operation: string) {
    super(BehaviourErrorCode.DynamicOnly, `${operation} is not available for this supervisor's strategy`);
  }
}

/** A lifecycle event that the child lifecycle machine does not allow in the current state. */
export class IllegalTransition extends MoloError {
  constructor(
    readonly state: string,
    readonly event: string,
  ) {
    super(BehaviourErrorCode.IllegalTransition, `lifecycle event ${event} is not allowed in state ${state}`);
  }
}
