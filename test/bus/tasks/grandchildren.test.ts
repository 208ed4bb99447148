/**
 * A process-placed handler that starts processes of its own: ending its host (hard timeout,
 * terminateHost, the parent dying) ends them too, since the host leads a process group.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostsExited, placementHosts, type ActorSystem } from '../../../src/actors/index.js';
import { createEnvelope, TaskHardTimeout } from '../../../src/bus/tasks/index.js';
import { PlacedExecutor } from '../../../src/bus/tasks/executors/placed.js';
import { runScript } from '../../support/run-script.js';
import { eventually, testSystem } from '../../support/systems.js';

const handlersModule = new URL('./fixtures/handlers.ts', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'molo-grandchildren-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Alive and not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function sleeperPid(file: string): Promise<number> {
  await eventually(() => existsSync(file) && readFileSync(file, 'utf8') !== '', 20_000, 'the handler to start its sleeper');
  const pid = Number(readFileSync(file, 'utf8'));
  expect(running(pid)).toBe(true);
  return pid;
}

/** A process executor on a system of its own, closed and shut down after `body`. */
async function withExecutor(body: (executor: PlacedExecutor, system: ActorSystem) => Promise<void>): Promise<void> {
  const system = testSystem({ node: 'grandchildren' });
  const executor = new PlacedExecutor(system, 'process', handlersModule);
  try {
    await body(executor, system);
  } finally {
    await executor.close();
    system.shutdown();
    await hostsExited(system);
  }
}

describe.skipIf(process.platform === 'win32')('a process-placed handler that starts processes', () => {
  it('at the hard timeout, its host and what the handler started are killed', async () => {
    await withExecutor(async (executor) => {
      const file = join(dir, 'hard-timeout');
      const run = executor.run(createEnvelope({ name: 'spawnSleeper', payload: file, timeoutSoftMs: 500, timeoutHardMs: 3_000 }), new AbortController().signal);
      run.catch(() => undefined);
      const pid = await sleeperPid(file);
      await expect(run).rejects.toBeInstanceOf(TaskHardTimeout);
      await eventually(() => !running(pid), 5_000, 'the sleeper to be killed');
    });
  }, 30_000);

  it('closing the executor (terminateHost) kills the host process group', async () => {
    await withExecutor(async (executor, system) => {
      await executor.ready();
      const file = join(dir, 'terminate');
      const run = executor.run(createEnvelope({ name: 'spawnSleeper', payload: file, timeoutSoftMs: 60_000, timeoutHardMs: 120_000 }), new AbortController().signal);
      run.catch(() => undefined);
      const pid = await sleeperPid(file);
      expect(placementHosts(system).map((host) => host.placement)).toEqual(['process']);
      await executor.close();
      await eventually(() => !running(pid), 5_000, 'the sleeper to be killed');
    });
  }, 30_000);

  it('a parent killed by SIGKILL takes its host and what the handler started with it', async () => {
    const file = join(dir, 'parent-killed');
    const result = await runScript('test/bus/tasks/fixtures/orphaning-tasks.ts', { args: [file] });
    expect(result.signal).toBe('SIGKILL');
    const pid = Number(result.stdout.trim());
    expect(pid).toBeGreaterThan(0);
    await eventually(() => !running(pid), 10_000, 'the sleeper to be killed');
  }, 30_000);
});
