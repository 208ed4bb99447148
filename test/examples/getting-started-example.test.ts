/**
 * examples/getting-started/main.ts, as `npm run example` runs it (node with the molo-source
 * condition and tsx, a real child process forking a real peer node): with --once its story is
 * printed in order and it exits 0 on its own; without, it keeps running until SIGTERM or a
 * Ctrl-C (SIGINT to the process group, as a terminal sends it), then stops both nodes and exits 0.
 * The output docs/getting-started.md shows is the output of the --once run, ports and pids aside.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot, runScript, TS_NODE_ARGS } from '../support/run-script.js';

const SCRIPT = 'examples/getting-started/main.ts';

/** The example's lines, in the order it prints them. */
const STORY = [
  /peer node peer@127\.0\.0\.1:\d+ up \(pid \d+\)/,
  /app node app@127\.0\.0\.1:\d+ up; observer page: http:\/\/127\.0\.0\.1:\d+\//,
  /supervision tree: root -> greeter \(running\), guest-workers \(running\), scheduler \(running\)/,
  // Answered by the peer's greeter: the node in the answer is the peer's, not this one's.
  /remote call to greeter on (peer@127\.0\.0\.1:\d+) answered: "hello, ada, from \1"/,
  /task welcome ran: stored guest #1 ada: "hello, ada, from app@127\.0\.0\.1:\d+"/,
  /welcome for ada enqueued again: duplicate true/,
  /scheduled guest-report in 1 s/,
  /schedule fired: report: 1 guest\(s\): ada/,
  /GET \/ -> 200 text\/html; charset=utf-8, Molo observer/,
];

function expectInOrder(output: string, lines: readonly RegExp[]): void {
  let at = 0;
  for (const line of lines) {
    const match = line.exec(output.slice(at));
    expect(match, `${String(line)} after offset ${at} in:\n${output}`).not.toBeNull();
    at += match!.index + match![0].length;
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const peerPid = (output: string): number => Number(/peer node \S+ up \(pid (\d+)\)/.exec(output)?.[1]);

/** Runs the example without --once, sends `signal` once it says it is running, and waits for it to exit. */
function runUntilSignal(signal: NodeJS.Signals, group: boolean): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...TS_NODE_ARGS, SCRIPT], { cwd: projectRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let sent = false;
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (!sent && output.includes('Ctrl-C stops it')) {
        sent = true;
        process.kill(group ? -child.pid! : child.pid!, signal);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const guard = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`no exit within 25 s; output: ${output.slice(-3_000)}`));
    }, 25_000);
    child.on('error', reject);
    child.on('close', (code, exitSignal) => {
      clearTimeout(guard);
      resolve({ code, signal: exitSignal, output });
    });
  });
}

describe('examples/getting-started', () => {
  it('--once: two nodes, a remote call, a task, a schedule, the observer page; exits 0 on its own', async () => {
    const started = Date.now();
    const result = await runScript(SCRIPT, { args: ['--once'], timeoutMs: 25_000 });
    const output = result.stdout + result.stderr;
    expectInOrder(output, [...STORY, /stopped \(stop, clean: true\); peer stopped too/]);
    expect(result.stderr).toBe('');
    expect([result.code, result.signal]).toEqual([0, null]);
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(alive(peerPid(output))).toBe(false);
    // The tutorial's "It prints" block is this run's output, but for ports and pids.
    const page = readFileSync(join(projectRoot, 'docs', 'getting-started.md'), 'utf8');
    const printed = /It prints[^\n]*\n\n```\n([\s\S]*?)```/.exec(page)?.[1];
    const digitless = (text: string): string[] => text.trim().split('\n').map((line) => line.replace(/\d+/g, 'N'));
    expect(printed, 'the "It prints" block of docs/getting-started.md').toBeDefined();
    expect(digitless(printed!)).toEqual(digitless(result.stdout));
  }, 30_000);

  it('keeps running until SIGTERM, then stops both nodes and exits 0', async () => {
    const { code, signal, output } = await runUntilSignal('SIGTERM', false);
    expectInOrder(output, [...STORY, /running; open http:\/\/127\.0\.0\.1:\d+\/ in a browser\. Ctrl-C stops it/, /stopped \(SIGTERM, clean: true\); peer stopped too/]);
    expect([code, signal]).toEqual([0, null]);
    expect(alive(peerPid(output))).toBe(false);
  }, 30_000);

  it('Ctrl-C (SIGINT to the process group) stops both nodes and exits 0', async () => {
    const { code, signal, output } = await runUntilSignal('SIGINT', true);
    expectInOrder(output, [...STORY, /Ctrl-C stops it/, /stopped \(SIGINT, clean: true\); peer stopped too/]);
    expect([code, signal]).toEqual([0, null]);
    expect(alive(peerPid(output))).toBe(false);
  }, 30_000);
});
