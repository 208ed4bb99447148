/**
 * A watchdog that kills every program's process group when this Node.js process dies in a way no
 * exit hook sees (SIGKILL, a fatal signal, the OOM killer). It is a tiny `sh` in a session of its
 * own, reading a pipe from this process: `+<pgid>` registers a group (`+<pgid>:<cgroup dir>` with
 * the cgroup of its tree, process-tree.ts), `-<pgid>` forgets it, and at end of file (this process
 * is gone, however it died, and the kernel closed the pipe) it SIGKILLs every group still
 * registered and every member of their cgroups, removes those cgroups, and exits.
 *
 * Why not PR_SET_PDEATHSIG: it needs a native launcher, reaches only the direct child (not what a
 * program started in its group) and fires when the spawning *thread* exits. A pipe's end of file
 * needs nothing but `sh`. The watchdog runs only while programs do: it is told to finish (EOF) a
 * second after the last group is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';

// Signals a terminal sends to the foreground group do not reach it (own session); HUP and INT are
// ignored all the same, so only the pipe's end makes it act.
const WATCHDOG_SCRIPT = `
trap '' HUP INT PIPE
groups=' '
while IFS= read -r line; do
  case "$line" in
    +*) groups="$groups\${line#+} " ;;
    -*) gone="\${line#-}"; kept=' '
        for entry in $groups; do [ "\${entry%%:*}" = "$gone" ] || kept="$kept$entry "; done
        groups="$kept" ;;
  esac
done
for entry in $groups; do kill -9 -"\${entry%%:*}" 2>/dev/null; done
for entry in $groups; do
  cgroup="\${entry#*:}"
  [ "$cgroup" = "$entry" ] && continue
  echo 1 > "$cgroup/cgroup.kill" 2>/dev/null || for pid in $(cat "$cgroup/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  for try in 1 2 3 4 5 6 7 8 9 10; do rmdir "$cgroup" 2>/dev/null && break; sleep 0.1; done
done
`;

let watchdog: ChildProcess | undefined;
/** Groups registered with the running watchdog, with their trees' cgroups. */
const watched = new Map<number, string | undefined>();

function startWatchdog(): ChildProcess | undefined {
  let child: ChildProcess;
  try {
    child = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  } catch {
    return undefined;
  }
  if (child.pid === undefined) {
    child.on('error', () => {});
    return undefined;
  }
  // Neither the watchdog nor its pipe keeps this process alive.
  child.unref();
  child.stdin!.on('error', () => {});
  (child.stdin as { unref?: () => void }).unref?.();
  child.on('error', () => {});
  child.once('exit', () => {
    if (watchdog !== child) return;
    watchdog = undefined;
    // Killed from outside while groups live: a new one takes them over.
    if (watched.size > 0) {
      const groups = [...watched];
      watched.clear();
      for (const [group, cgroup] of groups) watchGroup(group, cgroup);
    }
  });
  return child;
}

/**
 * Registers the group led by `pid`, and the cgroup of its tree if it has one (a path without
 * spaces): they are SIGKILLed if this process dies before `unwatchGroup(pid)`.
 */
export function watchGroup(pid: number, cgroup?: string): void {
  watchdog ??= startWatchdog();
  if (watchdog === undefined) return;
  watched.set(pid, cgroup);
  watchdog.stdin!.write(cgroup === undefined || /\s/.test(cgroup) ? `+${pid}\n` : `+${pid}:${cgroup}\n`);
}

/**
 * The group led by `pid` is gone (or killed by this process): forgotten. The watchdog ends a little
 * after the last one, so a program restarting in a loop does not start a watchdog per run.
 */
export function unwatchGroup(pid: number): void {
  if (!watched.delete(pid) || watchdog === undefined) return;
  watchdog.stdin!.write(`-${pid}\n`);
  if (watched.size === 0 && linger === undefined) {
    linger = setTimeout(finishIfIdle, WATCHDOG_LINGER_MS);
    linger.unref();
  }
}

/** How long an idle watchdog waits for a new group before it ends. */
export const WATCHDOG_LINGER_MS = 1_000;
let linger: NodeJS.Timeout | undefined;

function finishIfIdle(): void {
  linger = undefined;
  if (watched.size > 0 || watchdog === undefined) return;
  const finished = watchdog;
  watchdog = undefined;
  finished.stdin!.end();
}

/** The watchdog's pid while one runs; for tests. */
export function watchdogPid(): number | undefined {
  return watchdog?.pid;
}
