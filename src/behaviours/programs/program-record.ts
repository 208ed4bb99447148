/**
 * One supervised program as plain data: its state in the child lifecycle, its current process,
 * restart bookkeeping, health, waiting callers, and the actor timers armed for it. Timers are kept
 * per kind; a `TimerFired` message counts only if it is the one armed now (any other is stale).
 */
import type { TimerEntry } from '../../actors/index.js';
import type { From } from '../gen-server.js';
import type { LifecycleState } from '../lifecycle.js';
import type { ProbeHandle } from './health-probe.js';
import { childLogger, type ProgramLogger } from './logger.js';
import type { ProgramHost } from './program-host.js';
import { LogTail } from './log-tail.js';
import type { ProgramProcess } from './program-process.js';
import { TimerFired, type ProgramExitInfo, type ProgramHealth, type ProgramReply, type TimerKind } from './protocol.js';
import type { ResolvedProgramSpec } from './spec.js';

export interface ArmedTimer {
  readonly entry: TimerEntry;
  readonly message: TimerFired;
}

/** A caller of start/stop/restart, answered when the program reaches a settled state. */
export interface Waiter {
  readonly from: From<ProgramReply<unknown>>;
  readonly until: 'started' | 'stopped';
}

export interface ProgramRecord {
  readonly spec: ResolvedProgramSpec;
  readonly log: ProgramLogger;
  state: LifecycleState;
  process: ProgramProcess | undefined;
  /** Incremented per spawn; process events of an earlier run are ignored. */
  runId: number;
  /** Restart and failed-start times in the clock's ms, for `addRestart`. */
  restarts: readonly number[];
  totalRestarts: number;
  /** Restarts in a row, for the backoff delay; reset once a run lasts `backoff.maxMs`. */
  backoffLevel: number;
  spawnedAt: number;
  lastExit: ProgramExitInfo | undefined;
  /** In backoff: when the retry is due (clock ms). */
  retryAt: number | undefined;
  readonly timers: Map<TimerKind, ArmedTimer>;
  probe: ProbeHandle | undefined;
  probeId: number;
  health: ProgramHealth;
  probeFailures: number;
  /** Why the supervisor signalled the current process, if it did. */
  stopCause: 'stop' | 'unhealthy' | undefined;
  /** A restart asked for by hand: start again once stopped. */
  startAfterStop: boolean;
  waiters: Waiter[];
  /** Its last output lines, across runs (log-tail.ts). */
  readonly tail: LogTail;
}

/** A program that has never run: `stopped`, nothing armed, logging with its name bound. */
export function createProgramRecord(spec: ResolvedProgramSpec, logger: ProgramLogger): ProgramRecord {
  return {
    spec,
    log: childLogger(logger, { program: spec.name }),
    state: 'stopped',
    process: undefined,
    runId: 0,
    restarts: [],
    totalRestarts: 0,
    backoffLevel: 0,
    spawnedAt: 0,
    lastExit: undefined,
    retryAt: undefined,
    timers: new Map(),
    probe: undefined,
    probeId: 0,
    health: 'unchecked',
    probeFailures: 0,
    stopCause: undefined,
    startAfterStop: false,
    waiters: [],
    tail: new LogTail(),
  };
}

/** Arms the `kind` timer of `record`, replacing one already armed. */
export function arm(host: ProgramHost, record: ProgramRecord, kind: TimerKind, delayMs: number): void {
  disarm(host, record, kind);
  const message = new TimerFired(record.spec.name, kind);
  record.timers.set(kind, { entry: host.sendAfter(delayMs, message), message });
}

export function disarm(host: ProgramHost, record: ProgramRecord, kind: TimerKind): void {
  const armed = record.timers.get(kind);
  if (armed === undefined) return;
  record.timers.delete(kind);
  host.cancelTimer(armed.entry);
}

export function disarmAll(host: ProgramHost, record: ProgramRecord): void {
  for (const kind of [...record.timers.keys()]) disarm(host, record, kind);
}

/** Takes the armed timer `message` stands for, if it still is the armed one (false: stale). */
export function takeFiredTimer(record: ProgramRecord, message: TimerFired): boolean {
  if (record.timers.get(message.kind)?.message !== message) return false;
  record.timers.delete(message.kind);
  return true;
}

/** The `default` of a switch over a record's state: a state added to the lifecycle breaks the build there. */
export function unknownState(state: never): never {
  throw new Error(`unknown state ${String(state)}`);
}
