/**
 * Health checks of a running program: one probe at a time, `intervalMs` after the last one ended,
 * timed out by the actor's own `probeTimeout` timer. Results come back as `ProbeFinished`
 * messages; `failures` in a row make the program unhealthy. What to do then is the caller's: a
 * result only says whether the program should be restarted.
 */
import { startProbe, type ProbeOutcome } from './health-probe.js';
import { safeLog } from './logger.js';
import type { ProgramHost } from './program-host.js';
import { arm, disarm, type ProgramRecord } from './program-record.js';
import { ProbeFinished } from './protocol.js';

/** What a probe result asks of the supervisor: keep the program, or restart it (it is unhealthy and `onUnhealthy` is `restart`). */
export type ProbeVerdict = 'keep' | 'restart';

/** Arms the next probe, if the program has a health check. */
export function scheduleProbe(host: ProgramHost, record: ProgramRecord): void {
  const check = record.spec.health;
  if (check !== undefined) arm(host, record, 'probe', check.intervalMs);
}

/** The `probe` timer fired: starts a probe and its timeout, unless the program is no longer running as it was. */
export function runProbe(host: ProgramHost, record: ProgramRecord): void {
  const check = record.spec.health;
  if (check === undefined || record.state !== 'running' || record.stopCause !== undefined) return;
  const probeId = ++record.probeId;
  const name = record.spec.name;
  const post = (outcome: ProbeOutcome): void => host.post(new ProbeFinished(name, probeId, outcome));
  try {
    record.probe = startProbe(check, post);
  } catch (error) {
    // A probe that cannot even be started has failed; the result comes through the mailbox like any other.
    record.probe = { cancel: () => {} };
    post({ healthy: false, detail: error instanceof Error ? error.message : String(error) });
  }
  arm(host, record, 'probeTimeout', check.timeoutMs);
}

/** A probe answered; a result of an abandoned probe (not the current one) changes nothing. */
export function probeFinished(host: ProgramHost, record: ProgramRecord, message: ProbeFinished): ProbeVerdict {
  if (record.probe === undefined || message.probeId !== record.probeId) return 'keep';
  record.probe = undefined;
  disarm(host, record, 'probeTimeout');
  return judgeProbe(host, record, message.outcome);
}

/** The `probeTimeout` timer fired: the probe is abandoned and counts as failed. */
export function probeTimedOut(host: ProgramHost, record: ProgramRecord): ProbeVerdict {
  cancelProbe(record);
  return judgeProbe(host, record, { healthy: false, detail: 'timeout' });
}

/** Cancels the probe in flight and the probe timers: the program left `running`, or is being stopped. */
export function stopHealthChecks(host: ProgramHost, record: ProgramRecord): void {
  cancelProbe(record);
  disarm(host, record, 'probe');
  disarm(host, record, 'probeTimeout');
}

/** Abandons the probe in flight, if any (a command probe's process group is killed). */
export function cancelProbe(record: ProgramRecord): void {
  record.probe?.cancel();
  record.probe = undefined;
}

function judgeProbe(host: ProgramHost, record: ProgramRecord, outcome: ProbeOutcome): ProbeVerdict {
  const check = record.spec.health;
  if (check === undefined || record.state !== 'running' || record.stopCause !== undefined) return 'keep';
  if (outcome.healthy) {
    if (record.health === 'unhealthy') safeLog(record.log, 'info', { event: 'healthy' }, `healthy: '${record.spec.name}' passes its health check again`);
    record.health = 'healthy';
    record.probeFailures = 0;
  } else {
    record.probeFailures++;
    if (record.probeFailures >= check.failures && record.health !== 'unhealthy') {
      record.health = 'unhealthy';
      safeLog(
        record.log,
        'warn',
        { event: 'unhealthy', failures: record.probeFailures, detail: outcome.detail, action: check.onUnhealthy },
        `unhealthy: '${record.spec.name}' failed ${record.probeFailures} health checks in a row (${outcome.detail ?? 'failed'})`,
      );
      if (check.onUnhealthy === 'restart') return 'restart';
    }
  }
  arm(host, record, 'probe', check.intervalMs);
  return 'keep';
}
