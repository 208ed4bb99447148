/**
 * What goes in and out of a program supervisor's mailbox: the public status shapes, the calls,
 * and the internal messages (process events, timers, probe results).
 */
import type { LifecycleState } from '../lifecycle.js';
import type { ProbeOutcome } from './health-probe.js';
import type { ProgramRestart } from './spec.js';

export type ProgramHealth = 'unchecked' | 'healthy' | 'unhealthy';

/** How the last run ended: its own exit, a stop asked for, a kill for failing health checks, or no spawn at all. */
export type ProgramExitCause = 'exit' | 'stop' | 'unhealthy' | 'spawn-error';

export interface ProgramExitInfo {
  readonly code: number | null;
  readonly signal: string | null;
  readonly cause: ProgramExitCause;
  /** Wall-clock ms (the system clock's `wallNow`). */
  readonly at: number;
  /** The spawn error (an errno code such as ENOENT, or a message). */
  readonly error?: string;
}

export interface ProgramStatus {
  readonly name: string;
  readonly state: LifecycleState;
  /** The OS pid while a process exists. */
  readonly pid: number | undefined;
  readonly restart: ProgramRestart;
  /** Restarts and failed starts counted in the current window. */
  readonly restartsInWindow: number;
  readonly maxRestarts: number;
  readonly windowMs: number;
  /** Automatic restarts since the supervisor started (manual ones are not counted). */
  readonly totalRestarts: number;
  readonly health: ProgramHealth;
  /** Health checks failed in a row. */
  readonly probeFailures: number;
  readonly lastExit: ProgramExitInfo | undefined;
  /** In `backoff`: when the next start is due (wall-clock ms), and in how many ms. */
  readonly nextRetryAt: number | undefined;
  readonly nextRetryInMs: number | undefined;
  /** In `running`: ms since the process was spawned. */
  readonly uptimeMs: number | undefined;
}

export interface ProgramSupervisorStatus {
  readonly maxPrograms: number;
  readonly programs: readonly ProgramStatus[];
}

export type ProgramRequest =
  | { readonly op: 'status' }
  | { readonly op: 'start'; readonly name: string }
  | { readonly op: 'stop'; readonly name: string }
  | { readonly op: 'restart'; readonly name: string }
  | { readonly op: 'logs'; readonly name: string; readonly lines: number };

/** Errors travel as values so the caller, not the supervisor, throws them. */
export type ProgramReply<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: Error };

export function okReply<T>(value: T): ProgramReply<T> {
  return { ok: true, value };
}

// ---- internal messages (sent by the process and probe callbacks and by the actor's timers) ----

/** The OS could not spawn run `runId` of `program`. */
export class SpawnFailed {
  constructor(
    readonly program: string,
    readonly runId: number,
    readonly error: Error,
  ) {}
}

export class ProcessExited {
  constructor(
    readonly program: string,
    readonly runId: number,
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
  ) {}
}

/** Timer messages: the actor keeps the one it armed and ignores any other (a stale one). */
export class TimerFired {
  constructor(
    readonly program: string,
    readonly kind: TimerKind,
  ) {}
}

/** retry: backoff over; startup: startMs passed; kill: stop timeout passed; probe: next probe due; probeTimeout: probe too slow. */
export type TimerKind = 'retry' | 'startup' | 'kill' | 'probe' | 'probeTimeout';

export class ProbeFinished {
  constructor(
    readonly program: string,
    readonly probeId: number,
    readonly outcome: ProbeOutcome,
  ) {}
}
