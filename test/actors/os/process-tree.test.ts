/**
 * A group leader spawned with `tree: true` takes its whole tree with it: a descendant that left the
 * group (`setsid`) is killed by a SIGKILL to the group and by the leader's own exit, whether the
 * tree is a cgroup (where this process may make one) or the environment marker
 * (`MOLO_PROCESS_TREE=environment`, and wherever no cgroup can be made).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { signalGroup, spawnInGroup } from '../../../src/actors/os/process-group.js';
import { TREE_MECHANISM_ENV } from '../../../src/actors/os/process-tree.js';
import { eventually, killLeftovers } from '../../support/systems.js';

const dir = mkdtempSync(join(tmpdir(), 'molo-tree-'));
const started: number[] = [];
let run = 0;

afterEach(() => {
  delete process.env[TREE_MECHANISM_ENV];
});
afterAll(() => {
  killLeftovers(started);
  rmSync(dir, { recursive: true, force: true });
});

/** This process's cgroup v2 directory when it may make cgroups under it (as the tree code probes). */
function cgroupBase(): string | undefined {
  try {
    const mount = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((line) => line.split(' ')).find((fields) => fields[2] === 'cgroup2')?.[1];
    const own = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((line) => line.startsWith('0::'))?.slice(3);
    if (mount === undefined || own === undefined) return undefined;
    const probe = join(mount, own, `molo-tree-test-${process.pid}`);
    mkdirSync(probe);
    rmdirSync(probe);
    return join(mount, own);
  } catch {
    return undefined;
  }
}

const running = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

/**
 * A leader (`sh`) that starts `sleep 60` in a session of its own, then sleeps (or exits, `leaderExits`);
 * answers the leader and the detached sleeper's pid.
 */
async function leaderWithDetachedChild(leaderExits: boolean) {
  const file = join(dir, `sleeper-${++run}`);
  const script = `setsid sh -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 60' "$0" & ${leaderExits ? 'while [ ! -e "$0" ]; do sleep 0.05; done; exit 0' : 'exec sleep 60'}`;
  const leader = spawnInGroup('sh', ['-c', script, file], { cwd: undefined, env: {}, stdio: 'ignore', tree: true });
  started.push(leader.pid!);
  await eventually(() => existsSync(file), 10_000, 'the detached sleeper to start');
  const sleeper = Number(readFileSync(file, 'utf8'));
  started.push(sleeper);
  const stat = readFileSync(`/proc/${sleeper}/stat`, 'utf8');
  // Its own session and group: kill(-leader) cannot reach it.
  expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])).toBe(sleeper);
  return { leader, sleeper };
}

/** The cgroup v2 path of `pid` (the `0::` line). */
const cgroupOf = (pid: number): string => readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((line) => line.startsWith('0::')) ?? '';

const ownTrees = (base: string): string[] => readdirSync(base).filter((name) => name.startsWith(`molo-tree-${process.pid}-`));

const base = process.platform === 'linux' ? cgroupBase() : undefined;
const mechanisms = [
  { name: 'a cgroup', env: undefined, cgroup: true },
  { name: 'the environment marker', env: 'environment', cgroup: false },
] as const;

describe.skipIf(process.platform !== 'linux')('a tracked process tree', () => {
  describe.each(mechanisms)('by $name', (mechanism) => {
    const skip = mechanism.cgroup && base === undefined;

    it.skipIf(skip)('SIGKILL to the group kills the detached descendant too', async () => {
      if (mechanism.env !== undefined) process.env[TREE_MECHANISM_ENV] = mechanism.env;
      const { leader, sleeper } = await leaderWithDetachedChild(false);
      expect(cgroupOf(sleeper).includes('molo-tree-')).toBe(mechanism.cgroup);
      signalGroup(leader, 'SIGKILL');
      await eventually(() => !running(sleeper), 10_000, 'the detached sleeper to be killed');
      if (base !== undefined) await eventually(() => ownTrees(base).length === 0, 10_000, 'the cgroup to be removed');
    }, 20_000);

    it.skipIf(skip)('the leader exiting by itself takes the detached descendant with it', async () => {
      if (mechanism.env !== undefined) process.env[TREE_MECHANISM_ENV] = mechanism.env;
      const { leader, sleeper } = await leaderWithDetachedChild(true);
      await eventually(() => leader.exitCode !== null, 10_000, 'the leader to exit');
      await eventually(() => !running(sleeper), 10_000, 'the detached sleeper to be killed');
      if (base !== undefined) await eventually(() => ownTrees(base).length === 0, 10_000, 'the cgroup to be removed');
    }, 20_000);
  });

  it('a process spawned without `tree` is not tracked: its detached child outlives the group kill', async () => {
    const file = join(dir, 'untracked');
    const leader = spawnInGroup('sh', ['-c', `setsid sh -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 60' "$0" & exec sleep 60`, file], { cwd: undefined, env: {}, stdio: 'ignore' });
    started.push(leader.pid!);
    await eventually(() => existsSync(file), 10_000, 'the detached sleeper to start');
    const sleeper = Number(readFileSync(file, 'utf8'));
    started.push(sleeper);
    signalGroup(leader, 'SIGKILL');
    await eventually(() => leader.signalCode !== null, 10_000, 'the leader to die');
    expect(running(sleeper)).toBe(true);
    process.kill(sleeper, 'SIGKILL');
  }, 20_000);
});
