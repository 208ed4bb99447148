/**
 * `molo sup` and `molo programs` as child processes against a real node with a real OS program:
 * restart a child, stop and start a program, list programs in a table and as JSON; without the
 * token a 401 names the variable to set; usage errors exit 2.
 */
import { describe, expect, it } from 'vitest';
import type { TreeSnapshot } from '../../src/admin/index.js';
import { GenServer, ProgramSupervisor } from '../../src/behaviours/index.js';
import { sleep } from '../support/systems.js';
import { Counter, runMolo, startTestNode } from './helpers.js';

const TOKEN = 'ops-cli-token-0123456789abcdef';
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

describe('molo sup and molo programs', () => {
  it('act through the observer actions with MOLO_ADMIN_TOKEN, and say which variable a 401 wants', { timeout: 40_000 }, async () => {
    const { node } = await startTestNode({
      root: {
        children: [
          { id: 'worker', start: ({ system, parent }) => GenServer.start(system, () => new Counter('worker'), { link: parent }) },
          ProgramSupervisor.child('programs', { programs: [{ name: 'sleeper', command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60_000)'], stopTimeoutMs: 2_000 }], logger: quiet }),
        ],
      },
      admin: { port: 0, token: TOKEN },
    });
    const url = node.adminUrl!;
    const env = { MOLO_ADMIN_TOKEN: TOKEN };
    const tree = async () => (await fetch(`${url}/tree`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as Promise<TreeSnapshot>;
    const workerRef = async () => (await tree()).root!.children!.find((child) => child.id === 'worker')!.ref;
    for (let attempt = 0; attempt < 100; attempt++) {
      const status = (await tree()).sections['programs']?.[0]?.value as { programs: { state: string }[] } | undefined;
      if (status?.programs[0]?.state === 'running') break;
      await sleep(20);
    }

    const before = await workerRef();
    // Independent commands run side by side (each is a process); the program's own steps in order.
    const [refused, restarted, status, usage] = await Promise.all([
      runMolo(['sup', 'restart', 'root/worker', '--url', url]),
      runMolo(['sup', 'restart', 'root/worker', '--url', url], env),
      runMolo(['programs', 'status', '--url', url], env),
      runMolo(['sup', 'restart', '--url', url], env),
    ]);
    const stopped = await runMolo(['programs', 'stop', 'root/programs', 'sleeper', '--url', url, '--json'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/HTTP 401.*ADMIN_UNAUTHORIZED.*set MOLO_ADMIN_TOKEN/);
    expect(restarted.code, restarted.stderr).toBe(0);
    expect(restarted.stdout).toMatch(/^root\/worker on .*: restarted as <.*>\n$/);
    expect(await workerRef()).not.toBe(before);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/SUPERVISOR.*PROGRAM.*STATE.*PID/);
    expect(status.stdout).toMatch(/root\/programs.*sleeper.*running.*\d+.*0\/5/);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ path: 'root/programs', program: { name: 'sleeper', state: 'stopped' } });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('expected: molo sup restart PATH');

    const [started, listed, missing] = await Promise.all([
      runMolo(['programs', 'start', 'root/programs', 'sleeper', '--url', url], env),
      runMolo(['programs', 'status', '--json', '--url', url], env),
      runMolo(['sup', 'terminate', 'root/nope', '--url', url], env),
    ]);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toMatch(/^sleeper on .*: running \(pid \d+\)\n$/);
    expect(JSON.parse(listed.stdout)[0]).toMatchObject({ path: 'root/programs' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('ADMIN_ACTION_FAILED');
  });
});
