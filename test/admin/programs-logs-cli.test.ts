/**
 * `molo programs logs` as a child process against a real node running a real OS program: the
 * lines it wrote on stdout and stderr, across a restart, newest last; --lines, --json, a 404 for an
 * unknown program, a path that is not a program supervisor, and the token rule on the read.
 */
import { describe, expect, it } from 'vitest';
import { ProgramSupervisor, GenServer } from '../../src/behaviours/index.js';
import { sleep } from '../support/systems.js';
import { Counter, runMolo, startTestNode } from './helpers.js';

const TOKEN = 'programs-logs-token-0123456789ab';
const env = { MOLO_ADMIN_TOKEN: TOKEN };
const quiet = { info: () => {}, warn: () => {}, error: () => {} };
// stdout and stderr are separate pipes: the lines are spaced so their order is the order written.
const SCRIPT = "console.log('hello from ' + process.pid); setTimeout(() => console.error('warning: low disk'), 100); setTimeout(() => console.log('ready'), 200); setTimeout(() => {}, 60_000)";

describe('molo programs logs', () => {
  it('prints the tail the program supervisor kept, across a restart', { timeout: 60_000 }, async () => {
    const { node } = await startTestNode({
      root: {
        children: [
          { id: 'worker', start: ({ system, parent }) => GenServer.start(system, () => new Counter('worker'), { link: parent }) },
          ProgramSupervisor.child('programs', { programs: [{ name: 'talker', command: process.execPath, args: ['-e', SCRIPT], stopTimeoutMs: 2_000 }], logger: quiet }),
        ],
      },
      admin: { port: 0, token: TOKEN },
    });
    try {
      const url = ['--url', node.adminUrl!];
      const logsOf = async () => (await fetch(`${node.adminUrl}/programs/logs?path=root/programs&program=talker`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as Promise<{ lines: { line: string }[] }>;
      const waitLines = async (count: number) => {
        for (let attempt = 0; attempt < 200 && (await logsOf()).lines.length < count; attempt++) await sleep(25);
      };
      await waitLines(3);
      const first = await runMolo(['programs', 'logs', 'root/programs', 'talker', ...url], env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^\S+Z out (\d+) {2}hello from \1\n\S+Z err \1 {2}warning: low disk\n\S+Z out \1 {2}ready\n$/);

      expect((await runMolo(['programs', 'restart', 'root/programs', 'talker', ...url], env)).code).toBe(0);
      await waitLines(6);
      const [two, json, unknown, notPrograms, refused, usage] = await Promise.all([
        runMolo(['programs', 'logs', 'root/programs', 'talker', '--lines', '2', ...url], env),
        runMolo(['programs', 'logs', 'root/programs', 'talker', '--json', ...url], env),
        runMolo(['programs', 'logs', 'root/programs', 'nope', ...url], env),
        runMolo(['programs', 'logs', 'root/worker', 'talker', ...url], env),
        runMolo(['programs', 'logs', 'root/programs', 'talker', ...url]),
        runMolo(['programs', 'logs', 'root/programs', '--lines', 'x', ...url], env),
      ]);
      expect(two.code, two.stderr).toBe(0);
      expect(two.stdout).toMatch(/^… 4 earlier lines not shown\n.* err \d+ {2}warning: low disk\n.* out \d+ {2}ready\n$/);
      const body = JSON.parse(json.stdout) as { name: string; dropped: number; lines: { stream: string; pid: number; line: string }[] };
      expect(body).toMatchObject({ path: 'root/programs', name: 'talker', dropped: 0 });
      expect(body.lines.map((entry) => entry.line)).toEqual([expect.stringMatching(/^hello from/), 'warning: low disk', 'ready', expect.stringMatching(/^hello from/), 'warning: low disk', 'ready']);
      // Two runs, two pids.
      expect(body.lines[0]!.pid).not.toBe(body.lines[3]!.pid);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/HTTP 404.*PROGRAM_NOT_FOUND/);
      expect(notPrograms.code).toBe(1);
      expect(notPrograms.stderr).toMatch(/ADMIN_ACTION_FAILED.*not a program supervisor/);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/HTTP 401.*set MOLO_ADMIN_TOKEN/);
      expect(usage.code).toBe(2);
    } finally {
      await node.stop();
    }
  });
});
