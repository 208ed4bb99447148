import type { Ref } from '../actors/index.js';
import type { AutoShutdown, ChildSpec, ChildType, ResolvedChildSpec, RestartType, StartedChild } from './child-spec.js';
import type { LifecycleState } from './lifecycle.js';

export type Strategy = 'one_for_one' | 'one_for_all' | 'rest_for_one' | 'simple_one_for_one';

export interface SupervisorSpec {
  /** Default `one_for_one`. */
  readonly strategy?: Strategy;
  /** Restarts allowed within `periodMs`; default 1 (OTP). */
  readonly intensity?: number;
  /** Default 5,000 ms (OTP's 5 s). */
  readonly periodMs?: number;
  /** Children at most; default {@link DEFAULT_MAX_CHILDREN}. */
  readonly maxChildren?: number;
  /** Required (OTP), `[]` for none. Started in order, stopped in reverse; for `simple_one_for_one`, exactly one template. */
  readonly children: readonly ChildSpec[];
  /**
   * OTP 24's auto_shutdown: `any_significant` stops the supervisor (reason `shutdown`) when any
   * significant child exits by itself and is not restarted; `all_significant` when the last one
   * running does. Default `never`. Not for `simple_one_for_one`.
   */
  readonly autoShutdown?: AutoShutdown;
}

/** OTP's `ignore` from a supervisor's init callback: nothing starts, `start` resolves with undefined. */
export const IGNORE = 'ignore' as const;
export type Ignore = typeof IGNORE;

/**
 * OTP's callback form of a supervisor: `init(args)` returns the flags and child specs (or
 * {@link IGNORE}), may be async, and may throw; `Supervisor.start` then fails with that reason.
 * It runs inside the supervisor, so what it opens belongs to the supervisor's lifetime.
 */
export interface SupervisorModule<Args = undefined> {
  readonly init: (args: Args) => SupervisorSpec | Ignore | PromiseLike<SupervisorSpec | Ignore>;
}

export const DEFAULT_INTENSITY = 1;
export const DEFAULT_PERIOD_MS = 5_000;
export const DEFAULT_MAX_CHILDREN = 100_000;
export const MAX_CHILDREN_CAP = 10_000_000;
export const MAX_INTENSITY = 1_000_000;

/** OTP's which_children entry: `ref` is the child, `restarting`, or undefined when not running. */
export interface ChildEntry {
  readonly id: string | undefined;
  readonly ref: Ref | 'restarting' | undefined;
  readonly type: ChildType;
}

export interface ChildCounts {
  readonly specs: number;
  readonly active: number;
  readonly supervisors: number;
  readonly workers: number;
}

export interface ChildStatus {
  readonly id: string | undefined;
  readonly ref: Ref | undefined;
  readonly state: LifecycleState;
  readonly type: ChildType;
  readonly restart: RestartType;
  readonly restartCount: number;
}

/** A snapshot for admin tools: what the supervisor knows, read through its own API. */
export interface SupervisorStatus {
  readonly strategy: Strategy;
  readonly intensity: number;
  readonly periodMs: number;
  readonly restartsInWindow: number;
  readonly remainingIntensity: number;
  readonly children: readonly ChildStatus[];
}

export type SupervisorRequest =
  | { readonly op: 'startChild'; readonly spec: ChildSpec | undefined; readonly args: readonly unknown[] }
  | { readonly op: 'terminateChild'; readonly child: string | Ref }
  | { readonly op: 'restartChild'; readonly id: string }
  | { readonly op: 'whichChild'; readonly child: string | Ref }
  | { readonly op: 'getChildSpec'; readonly child: string | Ref }
  | { readonly op: 'deleteChild'; readonly id: string }
  | { readonly op: 'whichChildren' }
  | { readonly op: 'countChildren' }
  | { readonly op: 'status' };

/** Replies carry errors as values so that the caller, not the supervisor, throws them. */
export type SupervisorReply<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: Error };

/** What `startChild`/`restartChild` answer inside the protocol: the ref and any extra (OTP's `{ok, Pid, Extra}`). */
export type ChildStarted = StartedChild;
export type { ResolvedChildSpec };
