/**
 * A program's runs: spawning it, what its exit or failed spawn means (supervisord's semantics on
 * the child lifecycle), the restart budget and backoff, and stopping it (stop signal, then SIGKILL
 * after `stopTimeoutMs`). Every state change goes through `move`.
 */
import { backoffDelay } from '../child-spec.js';
import { addRestart } from '../intensity.js';
import { safeLog } from './logger.js';
import { stopHealthChecks } from './program-health.js';
import type { ProgramHost } from './program-host.js';
import { ProgramProcess } from './program-process.js';
import { arm, disarm, type ProgramRecord, unknownState } from './program-record.js';
import { exitInfo } from './program-status.js';
import { move } from './program-transitions.js';
import { ProcessExited, SpawnFailed, type ProgramExitCause } from './protocol.js';
import { isFailedExit, restartsAfterExit } from './restart-policy.js';

const MAX_ERROR_TEXT = 512;

/** Starts a run: a new `runId`, a fresh health state, the process; `running` now or once `startMs` has passed. */
export function spawn(host: ProgramHost, record: ProgramRecord, event: 'START' | 'RETRY'): void {
  move(host, record, event);
  record.health = 'unchecked';
  record.probeFailures = 0;
  record.stopCause = undefined;
  const runId = ++record.runId;
  const { name } = record.spec;
  // Process callbacks run outside the actor: they only post messages.
  let process: ProgramProcess;
  try {
    process = new ProgramProcess(record.spec, record.log, host.maxLineBytes, {
      spawnFailed: (error) => host.post(new SpawnFailed(name, runId, error)),
      exited: (code, signal) => host.post(new ProcessExited(name, runId, code, signal)),
      // The one write outside the actor's turns: see log-tail.ts.
      line: (stream, pid, line) => record.tail.push({ at: host.wallNow(), stream, pid, line }),
    });
  } catch (error) {
    // Node throws synchronously for some bad arguments; handled like any failed spawn, through the mailbox.
    host.post(new SpawnFailed(name, runId, error instanceof Error ? error : new Error(String(error))));
    return;
  }
  record.process = process;
  if (process.pid === undefined) return; // the spawn error follows as a message
  record.spawnedAt = host.now();
  safeLog(record.log, 'info', { event: 'spawned', pid: process.pid }, `spawned: '${name}' with pid ${process.pid}`);
  if (record.spec.startMs === 0) move(host, record, 'STARTED');
  else arm(host, record, 'startup', record.spec.startMs);
}

/** An automatic restart out of `backoff`: counted in the status's `totalRestarts`. */
export function retry(host: ProgramHost, record: ProgramRecord): void {
  record.totalRestarts++;
  spawn(host, record, 'RETRY');
}

/** A start asked for by hand is a fresh decision: the restart window and the backoff start over. */
export function manualSpawn(host: ProgramHost, record: ProgramRecord): void {
  record.restarts = [];
  record.backoffLevel = 0;
  spawn(host, record, 'START');
}

export function spawnFailed(host: ProgramHost, record: ProgramRecord, error: Error): void {
  record.process = undefined;
  const code = (error as NodeJS.ErrnoException).code;
  record.lastExit = exitInfo(host, null, null, 'spawn-error', truncate(code ?? error.message));
  safeLog(record.log, 'error', { event: 'spawn-failed', error: record.lastExit.error }, `spawnerr: '${record.spec.name}' could not be spawned: ${error.message}`);
  if (record.state === 'starting') countFailure(host, record, 'START_FAILED');
  else if (record.state === 'stopping') stopEnded(host, record);
}

export function processExited(host: ProgramHost, record: ProgramRecord, code: number | null, signal: NodeJS.Signals | null): void {
  const pid = record.process?.pid;
  record.process = undefined;
  disarm(host, record, 'kill');
  const failed = isFailedExit(code, signal);
  const status = signal === null ? `exit status ${code}` : `terminated by ${signal}`;
  switch (record.state) {
    case 'starting': {
      record.lastExit = exitInfo(host, code, signal, 'exit');
      safeLog(record.log, 'warn', { event: 'exited', pid, code, signal }, `exited: '${record.spec.name}' (${status}) before it counted as started (startMs ${record.spec.startMs})`);
      countFailure(host, record, 'START_FAILED');
      return;
    }
    case 'running': {
      const cause: ProgramExitCause = record.stopCause === 'unhealthy' ? 'unhealthy' : 'exit';
      record.lastExit = exitInfo(host, code, signal, cause);
      // A kill for failed health checks is a failure whatever the exit status says.
      const restart = restartsAfterExit(record.spec.restart, failed || cause === 'unhealthy');
      const expected = !failed && cause === 'exit';
      safeLog(record.log, expected ? 'info' : 'warn', { event: 'exited', pid, code, signal, cause }, `exited: '${record.spec.name}' (${status}; ${expected ? 'expected' : 'not expected'})`);
      move(host, record, 'EXITED');
      if (restart) countFailure(host, record, 'RESTART');
      else move(host, record, 'DISCARD');
      return;
    }
    case 'stopping':
      record.lastExit = exitInfo(host, code, signal, 'stop');
      safeLog(record.log, 'info', { event: 'stopped', pid, code, signal }, `stopped: '${record.spec.name}' (${status})`);
      stopEnded(host, record);
      return;
    case 'stopped':
    case 'backoff':
    case 'exited':
    case 'fatal':
      // The current run has no process in these states: cannot happen, and changes nothing.
      return;
    default:
      unknownState(record.state);
  }
}

/**
 * A restart or a failed start: counted against the program's own budget (`addRestart`) by the
 * lifecycle guard, which leads to `backoff`, or to `fatal` once the budget is spent.
 */
function countFailure(host: ProgramHost, record: ProgramRecord, event: 'RESTART' | 'START_FAILED'): void {
  const now = host.now();
  const { spec } = record;
  move(host, record, event, () => {
    const window = addRestart(record.restarts, now, spec.maxRestarts, spec.windowMs);
    record.restarts = window.restarts;
    return !window.exceeded;
  });
  if (record.state === 'fatal') {
    safeLog(record.log, 'error', { event: 'fatal', maxRestarts: spec.maxRestarts, windowMs: spec.windowMs }, `gave up: '${spec.name}' entered fatal state, more than ${spec.maxRestarts} restarts within ${spec.windowMs} ms`);
    return;
  }
  // A run that lasted long enough starts the doubling over.
  if (event === 'RESTART' && now - record.spawnedAt >= spec.backoff.maxMs) record.backoffLevel = 0;
  const delay = backoffDelay(spec.backoff, record.backoffLevel++);
  safeLog(record.log, 'info', { event: 'backoff', delayMs: delay }, `backoff: '${spec.name}' restarts in ${delay} ms`);
  if (delay === 0) {
    retry(host, record);
    return;
  }
  record.retryAt = now + delay;
  arm(host, record, 'retry', delay);
}

/** Stops a program (cause `stop`), or kills a running one that failed its health checks (cause `unhealthy`: its exit is then a failure). */
export function stopProgram(host: ProgramHost, record: ProgramRecord, cause: 'stop' | 'unhealthy'): void {
  switch (record.state) {
    case 'backoff':
      move(host, record, 'STOP');
      stopEnded(host, record);
      return;
    case 'starting':
      move(host, record, 'STOP');
      break;
    case 'running':
      if (cause === 'stop') move(host, record, 'STOP');
      break;
    case 'stopping':
    case 'stopped':
    case 'exited':
    case 'fatal':
      return;
    default:
      unknownState(record.state);
  }
  record.stopCause = cause;
  stopHealthChecks(host, record);
  const process = record.process;
  if (process === undefined || process.pid === undefined) return; // a spawn failure is on its way: it ends the stop
  process.signal(record.spec.stopSignal);
  if (!record.timers.has('kill')) arm(host, record, 'kill', record.spec.stopTimeoutMs);
}

/** SIGKILL for a process still there `stopTimeoutMs` after its stop signal. */
export function killAfterStopTimeout(record: ProgramRecord): void {
  safeLog(record.log, 'warn', { event: 'kill', pid: record.process?.pid }, `killing '${record.spec.name}' with SIGKILL: still alive ${record.spec.stopTimeoutMs} ms after ${record.spec.stopSignal}`);
  record.process?.signal('SIGKILL');
}

/** Ends a stop; a manual restart then starts the program again. */
function stopEnded(host: ProgramHost, record: ProgramRecord): void {
  if (record.state === 'stopping') move(host, record, 'STOPPED');
  if (record.startAfterStop && record.state === 'stopped') {
    record.startAfterStop = false;
    manualSpawn(host, record);
  }
}

function truncate(text: string): string {
  return text.length <= MAX_ERROR_TEXT ? text : `${text.slice(0, MAX_ERROR_TEXT)}…`;
}
