/**
 * When a program is restarted: small pure functions, tested alone. supervisord's policies are
 * OTP's restart types under other names. The delay before a restart is `backoffDelay` of
 * ../child-spec.ts, shared with Supervisor children.
 */
import { shouldRestart, type RestartType } from '../child-spec.js';
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
