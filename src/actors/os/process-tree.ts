/**
 * Reaping a process's whole tree, including what left its process group: a `setsid` child or a
 * daemonizing double fork escapes `kill(-pgid)` (process-group.ts). Linux only; elsewhere a tree
 * is only its group.
 *
 * Two mechanisms, the first that works here:
 * - **A cgroup v2 per tree**, made under this process's own cgroup: the kernel keeps every
 *   descendant in it whatever it does to its session or group, and `cgroup.kill` (Linux 5.14; else a
 *   SIGKILL to each listed pid) ends them all. Needs write access to the cgroup tree (root, or a
 *   delegated subtree); tried once per process, then remembered. `MOLO_PROCESS_TREE=environment`
 *   turns it off (a cgroup tree that something else manages).
 * - **An environment marker** otherwise: `MOLO_TREE_<random>=1` in the leader's environment, which
 *   everything it starts inherits; a kill scans `/proc/<pid>/environ` for it (as Jenkins'
 *   ProcessTreeKiller does). A descendant that execs with a cleared or rebuilt environment escapes,
 *   as does one running as another user (its environ is unreadable).
 * Both run only on kill paths, synchronously (an exit hook uses them); the scan costs one read per
 * process on the machine, so it is never run on a timer.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

const linux = process.platform === 'linux';
/** Rounds of kill-and-look-again: a member forking while it is killed leaves a child to catch. */
const KILL_ROUNDS = 4;
/** How long a cgroup's removal is retried while its killed members finish dying. */
const RELEASE_RETRY_MS = 50;
const RELEASE_ATTEMPTS = 40;
const CGROUP_PREFIX = 'molo-tree-';
/** `environment`: never make a cgroup, track trees by the environment marker alone. */
export const TREE_MECHANISM_ENV = 'MOLO_PROCESS_TREE';

let cgroupBase: string | null | undefined;
let created = 0;

/** The directory of this process's cgroup v2, if this process may make cgroups under it; null otherwise. */
function cgroupParent(): string | null {
  if (cgroupBase !== undefined) return cgroupBase;
  cgroupBase = null;
  if (!linux) return null;
  try {
    const mount = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((line) => line.split(' '))
      .find((fields) => fields[2] === 'cgroup2')?.[1];
    const own = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((line) => line.startsWith('0::'))
      ?.slice(3);
    if (mount === undefined || own === undefined) return null;
    const base = join(mount, own);
    const probe = join(base, `${CGROUP_PREFIX}${process.pid}-probe`);
    mkdirSync(probe);
    rmdirSync(probe);
    cgroupBase = base;
    removeStale(base);
  } catch {
    // No cgroup v2, or not ours to divide: the environment marker does the job.
  }
  return cgroupBase;
}

/**
 * Cgroups left by a process that died without removing them (its watchdog kills their members but
 * may give up on the rmdir): removed when empty. Members are never killed here: a pid seen dead in
 * this pid namespace may be alive in another that shares the cgroup tree.
 */
function removeStale(base: string): void {
  for (const name of readdirSync(base)) {
    const owner = /^molo-tree-(\d+)-/.exec(name)?.[1];
    if (owner === undefined || Number(owner) === process.pid || existsSync(`/proc/${owner}`)) continue;
    removeCgroup(join(base, name), 1);
  }
}

/** SIGKILLs every member of the cgroup; false when it had none. */
function killCgroup(dir: string): boolean {
  let pids = members(dir);
  if (pids.length === 0) return false;
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
    return true;
  } catch {
    // Before Linux 5.14: one pid at a time, looking again for children forked meanwhile.
  }
  for (let round = 0; round < KILL_ROUNDS && pids.length > 0; round++) {
    for (const pid of pids) kill(pid);
    pids = members(dir);
  }
  return true;
}

function members(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** rmdir, retried while killed members are still on their way out (EBUSY). */
function removeCgroup(dir: string, attempts: number): void {
  try {
    rmdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EBUSY' && attempts > 1) setTimeout(() => removeCgroup(dir, attempts - 1), RELEASE_RETRY_MS).unref();
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** The processes of this machine whose environment holds `needle` (this process excluded). */
function marked(needle: Buffer): number[] {
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if (environOf(pid)?.includes(needle) === true) found.push(pid);
  }
  return found;
}

/** PF_KTHREAD in /proc/<pid>/stat's flags: a kernel thread, whose environment is always empty. */
const KERNEL_THREAD_FLAG = 0x00200000;
/** How often, 1 ms apart, an empty environment of a live process is read again. */
const EXEC_SETTLE_READS = 20;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * The environment of `pid`, undefined when gone or unreadable. A process in the middle of `execve`
 * (a `sh` exec'ing its command) reads as empty for a moment: measured here, 1 read in 100 right
 * after a spawn. Its marker would be missed, and the process would escape the kill, so an empty read
 * of a live user process is read again until the exec has settled.
 */
function environOf(pid: number): Buffer | undefined {
  for (let read = 0; ; read++) {
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${pid}/environ`);
    } catch {
      return undefined; // Gone meanwhile, or another user's.
    }
    if (environ.length > 0 || read >= EXEC_SETTLE_READS || !liveUserProcess(pid)) return environ;
    Atomics.wait(pause, 0, 0, 1);
  }
}

/** Neither a zombie (whose environment is gone for good) nor a kernel thread. */
function liveUserProcess(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    const flags = Number(fields[6]);
    return state !== 'Z' && state !== 'X' && (flags & KERNEL_THREAD_FLAG) === 0;
  } catch {
    return false;
  }
}

/** One process tree: spawn its leader with `spawnArgs` and `env`, `kill` it whole, `release` it at the end. */
export class ProcessTree {
  /** Added to the leader's environment: the marker its descendants inherit. */
  readonly env: Readonly<Record<string, string>>;
  readonly #needle: Buffer;
  #cgroup: string | undefined;
  /** The leader was seen in the cgroup: an empty cgroup then means the whole tree is gone. */
  #joined = false;

  constructor() {
    const name = `MOLO_TREE_${randomBytes(12).toString('hex')}`;
    this.env = linux ? { [name]: '1' } : {};
    this.#needle = Buffer.from(`${name}=1\0`);
  }

  /** The tree's cgroup directory, while it has one. */
  get cgroup(): string | undefined {
    return this.#cgroup;
  }

  /**
   * The command to spawn for the leader: when a cgroup can be made, a `sh` that moves itself into it
   * and then execs `command` (same pid), so nothing the leader forks, however early, starts outside.
   */
  spawnArgs(command: string, args: readonly string[]): [string, string[]] {
    // An operator who wants no cgroups made (a cgroup tree managed by something else) says so.
    if (process.env[TREE_MECHANISM_ENV] === 'environment') return [command, [...args]];
    const base = cgroupParent();
    if (base === null) return [command, [...args]];
    const dir = join(base, `${CGROUP_PREFIX}${process.pid}-${++created}`);
    try {
      mkdirSync(dir);
    } catch {
      return [command, [...args]];
    }
    this.#cgroup = dir;
    // A refused move leaves the leader outside, found by its marker instead (kill()).
    return ['/bin/sh', ['-c', 'echo $$ > "$1" 2>/dev/null; shift; exec "$@"', 'molo-tree', join(dir, 'cgroup.procs'), command, ...args]];
  }

  /**
   * Looks once (a little after the spawn) whether the leader made it into the cgroup, so that a
   * kill finding the cgroup empty can skip the /proc scan.
   */
  confirm(pid: number): void {
    if (this.#cgroup !== undefined && members(this.#cgroup).includes(pid)) this.#joined = true;
  }

  /** SIGKILLs every process of the tree still alive, the leader included. */
  kill(): void {
    if (!linux) return;
    // An empty cgroup: every member is gone, or the leader never got in (only the marker tells).
    if (this.#cgroup !== undefined && (killCgroup(this.#cgroup) || this.#joined)) return;
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const pids = marked(this.#needle);
      if (pids.length === 0) return;
      for (const pid of pids) kill(pid);
    }
  }

  /** The leader has exited and the tree was killed: its cgroup is removed once empty. */
  release(): void {
    const dir = this.#cgroup;
    this.#cgroup = undefined;
    if (dir !== undefined) removeCgroup(dir, RELEASE_ATTEMPTS);
  }
}
