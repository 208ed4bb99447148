/**
 * Exit reasons, as OTP has them. `kill` is only ever a signal: the actor it hits is seen to exit
 * with `killed`. Anything a handler throws becomes the exit reason (non-Errors are wrapped).
 */
export type ExitReason = 'normal' | 'shutdown' | 'kill' | 'killed' | 'noproc' | 'noconnection' | ShutdownWith | Error;

/** OTP's `{shutdown, Detail}`: a deliberate stop that carries why. */
export interface ShutdownWith {
  readonly shutdown: unknown;
}

export const shutdownWith = (detail: unknown): ShutdownWith => ({ shutdown: detail });

export function isShutdownWith(reason: ExitReason): reason is ShutdownWith {
  return typeof reason === 'object' && !(reason instanceof Error) && 'shutdown' in reason;
}

/** `normal`, `shutdown` and `{shutdown, _}`: exits a transient child is not restarted for. */
export function isCleanExit(reason: ExitReason): boolean {
  return reason === 'normal' || reason === 'shutdown' || isShutdownWith(reason);
}

export function formatReason(reason: ExitReason): string {
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error) return `${reason.name}: ${reason.message}`;
  let detail: string;
  try {
    detail = JSON.stringify(reason.shutdown) ?? String(reason.shutdown);
  } catch {
    detail = String(reason.shutdown);
  }
  return `{shutdown, ${detail}}`;
}
