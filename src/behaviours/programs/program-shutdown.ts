/**
 * When the supervisor itself stops: every program is stopped at once and waited for, and, as a
 * last resort when the actor exits without that (killed, system shutdown), every process is
 * SIGKILLed on the spot. No program outlives its supervisor.
 */
import { RECEIVE_TIMEOUT, type ActorContext } from '../../actors/index.js';
import { safeLog } from './logger.js';
import { cancelProbe } from './program-health.js';
import type { ProgramHost } from './program-host.js';
import { disarmAll, type ProgramRecord } from './program-record.js';
import { killAfterStopTimeout, processExited, spawnFailed } from './program-runs.js';
import { move } from './program-transitions.js';
import { ProcessExited, SpawnFailed } from './protocol.js';

/** After SIGKILL, how long a shutdown waits for the exit before giving up on a process (it is in the kernel's hands then). */
export const KILL_WAIT_MS = 5_000;

/**
 * Stops every program at once: the stop signal to each, SIGKILL to those still alive after their
 * `stopTimeoutMs`, and waits for every exit (at most KILL_WAIT_MS after a SIGKILL). Process
 * events are taken by selective receive, so other messages stay queued.
 */
export async function stopEveryProgram(host: ProgramHost, records: Iterable<ProgramRecord>, ctx: Pick<ActorContext, 'receive'>): Promise<void> {
  interface Pending {
    readonly record: ProgramRecord;
    deadline: number;
    killed: boolean;
  }
  const pending = new Map<string, Pending>();
  const now = host.now();
  for (const record of records) {
    record.startAfterStop = false;
    cancelProbe(record);
    disarmAll(host, record);
    if (record.state === 'backoff' || record.state === 'starting' || record.state === 'running') move(host, record, 'STOP');
    if (record.state !== 'stopping') continue;
    const alive = record.process?.alive === true;
    if (alive) record.process!.signal(record.spec.stopSignal);
    // No process yet means its spawn failure is queued: wait for it briefly.
    pending.set(record.spec.name, { record, deadline: now + (alive ? record.spec.stopTimeoutMs : KILL_WAIT_MS), killed: !alive });
  }
  while (pending.size > 0) {
    let earliest = Infinity;
    for (const entry of pending.values()) earliest = Math.min(earliest, entry.deadline);
    const message = await ctx.receive(isProcessEnd, Math.max(0, earliest - host.now()));
    if (message === RECEIVE_TIMEOUT) {
      const at = host.now();
      for (const [name, entry] of pending) {
        if (entry.deadline > at) continue;
        if (entry.killed) {
          safeLog(entry.record.log, 'error', { event: 'lost', pid: entry.record.process?.pid }, `'${name}' did not exit ${KILL_WAIT_MS} ms after SIGKILL`);
          pending.delete(name);
          continue;
        }
        killAfterStopTimeout(entry.record);
        entry.killed = true;
        entry.deadline = at + KILL_WAIT_MS;
      }
      continue;
    }
    const entry = pending.get(message.program);
    if (entry === undefined || message.runId !== entry.record.runId) continue;
    pending.delete(message.program);
    if (message instanceof SpawnFailed) spawnFailed(host, entry.record, message.error);
    else processExited(host, entry.record, message.code, message.signal);
  }
}

/** SIGKILLs every process and abandons every probe, synchronously: for an actor exiting without `terminate`. */
export function killEveryProgram(records: Iterable<ProgramRecord>): void {
  for (const record of records) {
    cancelProbe(record);
    if (record.process?.alive) record.process.signal('SIGKILL');
  }
}

function isProcessEnd(message: unknown): message is ProcessExited | SpawnFailed {
  return message instanceof ProcessExited || message instanceof SpawnFailed;
}
