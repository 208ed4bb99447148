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
import { ProcessTree } from './process-tree.js';

const groupsSupported = process.platform !== 'win32';
/** Leaders of the groups started here that have not been seen to exit. */
const liveLeaders = new Set<number>();
/** How long after a spawn its tree checks that the leader joined its cgroup. */
const TREE_CONFIRM_MS = 500;
/** The trees of the leaders spawned with `tree: true` (process-tree.ts), by leader pid. */
const trees = new Map<number, ProcessTree>();
let exitHookInstalled = false;

const killAllOnExit = (): void => {
  for (const pid of liveLeaders) signalPid(pid, 'SIGKILL');
  for (const tree of trees.values()) {
    tree.kill();
    tree.release();
  }
};

export interface GroupSpawnOptions {
  readonly cwd: string | undefined;
  /** Added to this process's environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly stdio: StdioOptions;
  /**
   * Track the whole tree, so a SIGKILL (and the leader's exit) also reaches what left the group
   * (`setsid`): a cgroup of its own or an environment marker (process-tree.ts). Linux only. With a
   * cgroup the leader starts as a `sh` that joins it and execs `command`, so a missing command is
   * an exit with code 127 rather than an `error` event.
   */
  readonly tree?: boolean;
}

/**
 * Spawns `command` as the leader of a new process group (a new session on POSIX). `pid` is set at
 * once when the spawn succeeded; otherwise the child emits `error` (ENOENT, EACCES, ...).
 */
export function spawnInGroup(command: string, args: readonly string[], options: GroupSpawnOptions): ChildProcess {
  const tree = options.tree === true ? new ProcessTree() : undefined;
  const [file, argv] = tree?.spawnArgs(command, args) ?? [command, [...args]];
  const child = spawn(file, argv, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env, ...tree?.env },
    stdio: options.stdio,
    detached: groupsSupported,
    windowsHide: true,
  });
  const pid = child.pid;
  if (pid !== undefined) {
    liveLeaders.add(pid);
    if (tree !== undefined) {
      trees.set(pid, tree);
      // By then the leader's `sh` has joined its cgroup, or failed to.
      setTimeout(() => tree.confirm(pid), TREE_CONFIRM_MS).unref();
    }
    if (groupsSupported) watchGroup(pid, tree?.cgroup);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', killAllOnExit);
    }
    child.once('exit', () => {
      // The leader is gone; whatever it left in its group goes too (a group never outlives its
      // leader), and so does the rest of its tree when it is tracked.
      signalPid(pid, 'SIGKILL');
      tree?.kill();
      tree?.release();
      trees.delete(pid);
      liveLeaders.delete(pid);
      unwatchGroup(pid);
      if (liveLeaders.size === 0 && exitHookInstalled) {
        exitHookInstalled = false;
        process.removeListener('exit', killAllOnExit);
      }
    });
  } else {
    tree?.release();
  }
  return child;
}

/** Sends `signal` to the group led by `pid` (to the process alone where groups do not exist). False if none was there. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): boolean {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return false;
  if (!groupsSupported) return child.kill(signal);
  const signalled = signalPid(pid, signal);
  // A kill means everything: what left the group too (a gentler signal is the leader's to pass on).
  if (signal === 'SIGKILL') trees.get(pid)?.kill();
  return signalled;
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
