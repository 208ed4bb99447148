import { describeReason } from '../telemetry/describe-reason.js';

/**
 * Exit reasons, as OTP has them. `kill` is only ever a signal: the actor it hits is seen to exit
 * with `killed`. Anything a handler throws becomes the exit reason (non-Errors are wrapped);
 * `ctx.stop(reason)`, a behaviour's stop and a start function's rejection may use any value
 * ({@link ExitValue}), as OTP's exit reasons are any term.
 */
export type ExitReason = 'normal' | 'shutdown' | 'kill' | 'killed' | 'noproc' | 'noconnection' | ShutdownWith | Error | ExitValue;

/** OTP's "any term" as a reason: every value but `undefined` (which means "no reason yet" here). */
export type ExitValue = string | number | boolean | bigint | symbol | null | object;

/** OTP's `{shutdown, Detail}`: a deliberate stop that carries why. */
export interface ShutdownWith {
  readonly shutdown: unknown;
}

export const shutdownWith = (detail: unknown): ShutdownWith => ({ shutdown: detail });

export function isShutdownWith(reason: ExitReason): reason is ShutdownWith {
  return typeof reason === 'object' && reason !== null && !(reason instanceof Error) && 'shutdown' in reason;
}

/** `normal`, `shutdown` and `{shutdown, _}`: exits a transient child is not restarted for. */
export function isCleanExit(reason: ExitReason): boolean {
  return reason === 'normal' || reason === 'shutdown' || isShutdownWith(reason);
}

/**
 * The reason as one line of text: atoms as they are, `{shutdown, <detail as JSON>}`, and errors as
 * `Name [CODE]: message`. Errors nested anywhere in a detail keep their name, code and message.
 */
export function formatReason(reason: ExitReason): string {
  return describeReason(reason);
}

