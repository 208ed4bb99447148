/**
 * The repository's own npm scripts, run through npm as a user types them: `npm run example` of the
 * cluster stopped by Ctrl-C (SIGINT to the whole foreground process group) exits 0 like `npm start`,
 * and the command the demo's banner prints reads the running demo's tree.
 *
 * Why `npm run example` said 130: npm runs a script through `sh -c`, and dash (Debian's /bin/sh)
 * kills itself with the SIGINT it received once its child exits, whatever the child's status; npm
 * re-raises the shell's signal. `exec` in the script leaves no shell (see test/admin/ctrl-c.test.ts).
 */
import { execFile, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/run-script.js';

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
}

/** npm on PATH, but running scripts with this test's node first on PATH. */
const env = { ...process.env, PATH: `${process.execPath.replace(/\/node$/, '')}:${process.env['PATH'] ?? ''}`, MOLO_ADMIN_PORT: '0' };

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Runs `npm <args>` in a process group of its own; once `ready` is printed, `onReady` runs, then the group gets one SIGINT. */
function runUntilCtrlC(args: readonly string[], ready: string, onReady: (output: string) => Promise<void> = async () => {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', args, { cwd: projectRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
    let output = '';
    let sent = false;
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (!sent && output.includes(ready)) {
        sent = true;
        onReady(output).then(
          () => setTimeout(() => signalGroup(child.pid!, 'SIGINT'), 200),
          (error: unknown) => {
            signalGroup(child.pid!, 'SIGKILL');
            reject(error);
          },
        );
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const guard = setTimeout(() => {
      signalGroup(child.pid!, 'SIGKILL');
      reject(new Error(`no exit within 80 s; output: ${output.slice(-3_000)}`));
    }, 80_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, output });
    });
  });
}

describe('npm scripts of the repository', () => {
  it('npm run example examples/cluster/main.ts exits 0 on Ctrl-C after stopping every node', async () => {
    const outcome = await runUntilCtrlC(['run', 'example', 'examples/cluster/main.ts'], 'Ctrl-C stops it');
    expect(outcome.output).toMatch(/all nodes stopped/);
    expect([outcome.code, outcome.signal]).toEqual([0, null]);
  }, 90_000);

  it("the demo's banner prints a command that reads the running demo's tree from inside the repository", async () => {
    let printed = '';
    let answer = '';
    const outcome = await runUntilCtrlC(['start'], 'Ctrl-C stops it', async (output) => {
      printed = /\(or: ([^)]+)\)/.exec(output)?.[1] ?? '';
      expect(printed).toMatch(/ tree --url http:\/\/127\.0\.0\.1:\d+$/);
      answer = await new Promise<string>((resolve) => {
        execFile('sh', ['-c', printed], { cwd: projectRoot, env, timeout: 40_000 }, (error, stdout, stderr) => resolve(`${error === null ? 'exit 0' : `failed: ${error.message}`}\n${stdout}${stderr}`));
      });
    });
    expect(answer, `the banner's command ${printed}`).toMatch(/^exit 0\n/);
    expect(answer).toMatch(/root \(supervisor Supervisor one_for_one\)\s+running/);
    expect([outcome.code, outcome.signal]).toEqual([0, null]);
  }, 90_000);
});
