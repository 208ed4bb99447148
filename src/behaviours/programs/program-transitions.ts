/**
 * The one place where a program's state changes. `move` consults `nextLifecycleState` (so an
 * illegal transition throws instead of happening) and starts or cancels what belongs to the states
 * it leaves and enters: the retry and startup timers, health checks, the kill timer, and the
 * callers waiting for the program to settle.
 */
import { nextLifecycleState, type LifecycleEventType } from '../lifecycle.js';
import { scheduleProbe, stopHealthChecks } from './program-health.js';
import type { ProgramHost } from './program-host.js';
import { disarm, type ProgramRecord, type Waiter } from './program-record.js';
import { programStatus } from './program-status.js';
import { okReply, type ProgramStatus } from './protocol.js';

export function move(host: ProgramHost, record: ProgramRecord, event: LifecycleEventType, guard?: () => boolean): void {
  const from = record.state;
  const to = nextLifecycleState(from, event, guard);
  record.state = to;
  if (from === to) return;
  if (from === 'backoff') {
    disarm(host, record, 'retry');
    record.retryAt = undefined;
  }
  if (from === 'starting') disarm(host, record, 'startup');
  if (from === 'running') stopHealthChecks(host, record);
  if (to === 'running') scheduleProbe(host, record);
  if (to === 'stopped' || to === 'fatal') disarm(host, record, 'kill');
  answerWaiters(host, record);
}

/**
 * Answers the callers whose wait is over, with the program's status: a start has settled once the
 * program runs, waits in backoff, is fatal, or is stopped with no restart pending; a stop once it
 * is stopped or fatal.
 */
function answerWaiters(host: ProgramHost, record: ProgramRecord): void {
  if (record.waiters.length === 0) return;
  const { state } = record;
  const started = state === 'running' || state === 'backoff' || state === 'fatal' || (state === 'stopped' && !record.startAfterStop);
  const stopped = state === 'stopped' || state === 'fatal';
  if (!started && !stopped) return;
  const remaining: Waiter[] = [];
  let status: ProgramStatus | undefined;
  for (const waiter of record.waiters) {
    if (waiter.until === 'started' ? started : stopped) waiter.from.reply(okReply((status ??= programStatus(host, record))));
    else remaining.push(waiter);
  }
  record.waiters = remaining;
}
