/**
 * Ctrl-C on the demo, as a terminal sends it: SIGINT to the whole foreground process group (the
 * shell npm runs, tsx, and the node tsx starts), then the exit code the user sees.
 *
 * Why `npm start` said 130 after a clean stop: not Node, not tsx (it exits with its child's 0).
 * npm runs scripts through `sh -c`; dash (Debian's /bin/sh) waits for its child and then kills
 * itself with the SIGINT it received, whatever the child's status (bash does not); npm then
 * re-raises the shell's signal. `exec` in the script replaces the shell, so the exit code is the
 * node's. The relays on the way (npm forwards signals, tsx re-sends one its child did not report
 * within 30 ms) also deliver extra copies of the one Ctrl-C; startNode counts copies within 1 s
 * as the same signal, not as a second, forcing one.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TS_NODE_ARGS } from '../support/run-script.js';
import { REPO } from './helpers.js';

/** `npm start` as package.json has it, with this test's node binary. */
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
const START = pkg.scripts.start.replace(/^exec node /, `exec ${JSON.stringify(process.execPath)} `);

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
}

/** Signals the process group; a group already gone (a clean stop before a later copy) is no error. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Starts `command` in a process group of its own, waits for the demo's banner, then SIGINTs the group (`copies` times, 20 ms apart). */
function ctrlC(command: string, args: readonly string[], copies = 1): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MOLO_ADMIN_PORT: '0', MOLO_DEMO_MS: '0' } });
    let output = '';
    let sent = false;
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (!sent && output.includes('Ctrl-C stops it')) {
        sent = true;
        for (let i = 0; i < copies; i++) setTimeout(() => signalGroup(child.pid!, 'SIGINT'), 300 + 20 * i);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const guard = setTimeout(() => {
      signalGroup(child.pid!, 'SIGKILL');
      reject(new Error(`no exit within 100 s; output: ${output.slice(-2_000)}`));
    }, 100_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, output });
    });
  });
}

describe('Ctrl-C on the demo', () => {
  // `npm start` should be `exec node … examples/demo.ts`: no shell left to re-raise the
  // signal, and no tsx CLI parent, whose relay exits 130 whenever its child acknowledges the signal
  // later than 60 ms (a loaded machine), even after a clean stop.
  it("npm start's command, sh -c 'exec node … examples/demo.ts', exits 0 after a clean stop", async () => {
    expect(START).toMatch(/^exec \S+ --conditions=molo-source --import tsx examples\/demo\.ts$/);
    const outcome = await ctrlC('sh', ['-c', START]);
    expect(outcome.output).toMatch(/stopped cleanly in \d+ ms/);
    expect([outcome.code, outcome.signal]).toEqual([0, null]);
  }, 120_000);

  it('three copies of one Ctrl-C (the group, then relays) are one signal: a clean stop, not a forced one', async () => {
    const outcome = await ctrlC(process.execPath, [...TS_NODE_ARGS, 'examples/demo.ts'], 3);
    expect(outcome.output).toMatch(/stopped cleanly in \d+ ms/);
    expect(outcome.output).not.toMatch(/node\.forced/);
    expect([outcome.code, outcome.signal]).toEqual([0, null]);
  }, 120_000);
});
