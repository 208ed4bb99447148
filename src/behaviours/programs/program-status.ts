/**
 * Snapshots for callers: a program's status and the supervisor's, and the record of how a run
 * ended. Times inside the actor are clock ms; the ones shown are wall-clock ms.
 */
import { restartsInWindow } from '../intensity.js';
import type { ProgramHost } from './program-host.js';
import type { ProgramRecord } from './program-record.js';
import type { ProgramExitCause, ProgramExitInfo, ProgramStatus, ProgramSupervisorStatus } from './protocol.js';

export function supervisorStatus(host: ProgramHost, maxPrograms: number, records: Iterable<ProgramRecord>): ProgramSupervisorStatus {
  return { maxPrograms, programs: [...records].map((record) => programStatus(host, record)) };
}

export function programStatus(host: ProgramHost, record: ProgramRecord): ProgramStatus {
  const now = host.now();
  const retryIn = record.retryAt === undefined ? undefined : Math.max(0, record.retryAt - now);
  return {
    name: record.spec.name,
    state: record.state,
    pid: record.process?.pid,
    restart: record.spec.restart,
    restartsInWindow: restartsInWindow(record.restarts, now, record.spec.windowMs),
    maxRestarts: record.spec.maxRestarts,
    windowMs: record.spec.windowMs,
    totalRestarts: record.totalRestarts,
    health: record.health,
    probeFailures: record.probeFailures,
    lastExit: record.lastExit,
    nextRetryAt: retryIn === undefined ? undefined : host.wallNow() + retryIn,
    nextRetryInMs: retryIn,
    uptimeMs: record.state === 'running' ? now - record.spawnedAt : undefined,
  };
}

export function exitInfo(host: ProgramHost, code: number | null, signal: string | null, cause: ProgramExitCause, error?: string): ProgramExitInfo {
  const info = { code, signal, cause, at: host.wallNow() };
  return error === undefined ? info : { ...info, error };
}
