/**
 * OS processes in their own process group, so a signal reaches the process and everything it
 * started (`kill(-pid)`), and a guard that SIGKILLs every group still alive when this Node.js
 * process exits. Used by program supervisors (programs, health probes) and by process placement
 * hosts. No group outlives this process: its owner kills it, a leader's exit takes what it left in
 * its group, the exit hook covers `process.exit`, and a watchdog (group-watchdog.ts) covers a death
 * no hook sees: SIGKILL, a fatal signal, the OOM killer. A group gets no signal a terminal sends
 * (Ctrl-C): an application stops its supervisors and system on SIGINT/SIGTERM, or dies of it and
 * the watchdog kills the groups.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { unwatchGroup, watchGroup } from './group-watchdog.js';

const groupsSupported = process.platform !== 'win32';
/** Leaders of the groups started here that have not been seen to exit. */
const liveLeaders = new Set<number>();
let exitHookInstalled = false;

const killAllOnExit = (): void => {
  for (const pid of liveLeaders) signalPid(pid, 'SIGKILL');
};

export interface GroupSpawnOptions {
  readonly cwd: string | undefined;
  /** Added to this process's environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly stdio: StdioOptions;
}

/**
 * Spawns `command` as the leader of a new process group (a new session on POSIX). `pid` is set at
 * once when the spawn succeeded; otherwise the child emits `error` (ENOENT, EACCES, ...).
 */
export function spawnInGroup(command: string, args: readonly string[], options: GroupSpawnOptions): ChildProcess {
  const child = spawn(command, [...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: options.stdio,
    detached: groupsSupported,
    windowsHide: true,
  });
  const pid = child.pid;
  if (pid !== undefined) {
    liveLeaders.add(pid);
    if (groupsSupported) watchGroup(pid);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', killAllOnExit);
    }
    child.once('exit', () => {
      // The leader is gone; whatever it left in its group goes too (a group never outlives its leader).
      signalPid(pid, 'SIGKILL');
      liveLeaders.delete(pid);
      unwatchGroup(pid);
      if (liveLeaders.size === 0 && exitHookInstalled) {
        exitHookInstalled = false;
        process.removeListener('exit', killAllOnExit);
      }
    });
  }
  return child;
}

/** Sends `signal` to the group led by `pid` (to the process alone where groups do not exist). False if none was there. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): boolean {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return false;
  if (!groupsSupported) return child.kill(signal);
  return signalPid(pid, signal);
}

function signalPid(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(groupsSupported ? -pid : pid, signal);
    return true;
  } catch {
    // ESRCH: the group is already gone.
    return false;
  }
}
