/**
 * When a program is restarted and after how long: small pure functions, tested alone.
 * supervisord's policies are OTP's restart types under other names.
 */
import { backoffDelay, shouldRestart, type RestartType } from '../child-spec.js';
import type { ProgramRestart } from './spec.js';

export const RESTART_TYPE_OF: Readonly<Record<ProgramRestart, RestartType>> = {
  always: 'permanent',
  'on-failure': 'transient',
  never: 'temporary',
};

/** An exit is a failure when the code is not 0 or a signal ended the process. */
export function isFailedExit(code: number | null, signal: string | null): boolean {
  return signal !== null || code !== 0;
}

/** `always` restarts after any exit, `on-failure` after a failed one, `never` after none. */
export function restartsAfterExit(policy: ProgramRestart, failed: boolean): boolean {
  return shouldRestart(RESTART_TYPE_OF[policy], failed ? new Error('program failed') : 'normal');
}

/** Delay before restart number `attempt` in a row (0-based): `initialMs * 2^attempt`, capped at `maxMs`. */
export function restartDelay(backoff: { readonly initialMs: number; readonly maxMs: number }, attempt: number): number {
  return backoffDelay(backoff, attempt);
}
