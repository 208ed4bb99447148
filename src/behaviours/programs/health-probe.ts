/**
 * Health probes: a TCP connect (healthy when the connection opens) or a command (healthy when it
 * exits with code 0). A probe reports once; `cancel` abandons it (the command's process group is
 * killed). Timeouts are not here: the actor times probes with its own timers, so the injected
 * clock governs them.
 */
import { connect } from 'node:net';
import { signalGroup, spawnInGroup } from './os-process.js';
import type { ResolvedHealthCheck } from './spec.js';

export interface ProbeOutcome {
  readonly healthy: boolean;
  /** Why it failed, for the log (an errno code, an exit status). */
  readonly detail: string | undefined;
}

export interface ProbeHandle {
  cancel(): void;
}

export function startProbe(check: ResolvedHealthCheck, done: (outcome: ProbeOutcome) => void): ProbeHandle {
  switch (check.type) {
    case 'tcp':
      return tcpProbe(check.host, check.port, done);
    case 'command':
      return commandProbe(check.command, check.args, check.cwd, check.env, done);
    default: {
      const unknownCheck: never = check;
      throw new Error(`unknown probe ${JSON.stringify(unknownCheck)}`);
    }
  }
}

function tcpProbe(host: string, port: number, done: (outcome: ProbeOutcome) => void): ProbeHandle {
  let settled = false;
  const socket = connect({ host, port });
  const finish = (outcome: ProbeOutcome): void => {
    if (settled) return;
    settled = true;
    socket.destroy();
    done(outcome);
  };
  socket.once('connect', () => finish({ healthy: true, detail: undefined }));
  socket.once('error', (error: NodeJS.ErrnoException) => finish({ healthy: false, detail: error.code ?? error.message }));
  socket.once('close', () => finish({ healthy: false, detail: 'closed' }));
  return {
    cancel: () => {
      settled = true;
      socket.destroy();
    },
  };
}

function commandProbe(
  command: string,
  args: readonly string[],
  cwd: string | undefined,
  env: Readonly<Record<string, string>>,
  done: (outcome: ProbeOutcome) => void,
): ProbeHandle {
  let settled = false;
  const finish = (outcome: ProbeOutcome): void => {
    if (settled) return;
    settled = true;
    done(outcome);
  };
  const child = spawnInGroup(command, args, { cwd, env, stdio: 'ignore' });
  child.once('error', (error: NodeJS.ErrnoException) => {
    if (child.pid === undefined) finish({ healthy: false, detail: error.code ?? error.message });
  });
  child.once('exit', (code, signal) =>
    finish(code === 0 ? { healthy: true, detail: undefined } : { healthy: false, detail: signal ?? `exit code ${code}` }),
  );
  return {
    cancel: () => {
      settled = true;
      signalGroup(child, 'SIGKILL');
    },
  };
}
