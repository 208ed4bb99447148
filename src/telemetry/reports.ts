/**
 * Crash and supervisor reports as log lines, with fixed fields (OTP's crash reports). Written by
 * `Telemetry` when it observes a system, and by the kernel and supervisors themselves when nothing
 * observes them, so a crashing, restarting child is never silent.
 */
import { describeReason } from './describe-reason.js';
import type { TelemetryActor } from './actor-shape.js';
import type { Logger, LogLevel } from './logger-api.js';

/** Log level of each report event; events not listed log at `info`. */
export const REPORT_LEVELS: Readonly<Record<string, LogLevel>> = {
  'supervisor.child_terminated': 'error',
  'supervisor.start_error': 'error',
  'supervisor.shutdown': 'error',
  'supervisor.child_restarted': 'info',
};

/** A behaviour's lifecycle report (`event` plus its fixed fields), at the event's level. */
export function logReport(logger: Logger, event: string, fields: Readonly<Record<string, unknown>>): void {
  logger[reportLevel(event)]({ event, ...fields }, event);
}

/** The level a report event is logged at: callers check it before building the fields. */
export function reportLevel(event: string): LogLevel {
  return REPORT_LEVELS[event] ?? 'info';
}

/** `actor.crashed` (error) for an exit with an error; `actor.exited` at debug for any other exit. */
export function logExit(logger: Logger, actor: TelemetryActor, reason: unknown): void {
  if (reason instanceof Error) {
    // Reading `stack` formats it (through source maps when enabled): tens of µs a crash, so only when written.
    if (!logger.isLevelEnabled('error')) return;
    logger.error({ event: 'actor.crashed', ...describeActor(actor), reason: describeReason(reason), stack: reason.stack }, 'actor.crashed');
  } else if (logger.isLevelEnabled('debug')) {
    logger.debug({ event: 'actor.exited', ...describeActor(actor), reason: describeReason(reason) }, 'actor.exited');
  }
}

export function describeActor(actor: TelemetryActor): { actor: string; name: string | undefined; behaviour: string } {
  return { actor: actor.self.toString(), name: actor.name, behaviour: actor.behaviour.name ?? 'actor' };
}
