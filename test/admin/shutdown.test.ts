import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO } from './helpers.js';
import { REPEAT_SIGNAL_WINDOW_MS } from '../../src/admin/node.js';

const FIXTURE = 'test/admin/fixtures/node-script.ts';

const spawned = new Set<ChildProcessByStdio<null, Readable, Readable>>();
// A test that failed half-way must not leave its node process running.
afterEach(() => {
  for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  spawned.clear();
});

interface NodeProcess {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly adminUrl: string;
  /** Resolves with the exit code and everything printed. */
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/** Starts the fixture node as a real process and waits for its `ready <url>` line. */
function startNodeProcess(mode: 'clean' | 'hang', deadlineMs: number): Promise<NodeProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, mode, String(deadlineMs)], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      const ready = /^ready (\S+)$/m.exec(stdout);
      if (ready !== null) resolve({ child, adminUrl: ready[1]!, exit });
    });
    void exit.then(({ code }) => reject(new Error(`node exited (${code}) before it was ready:\n${stderr}`)));
  });
}

const events = (stderr: string): { event: string; [field: string]: unknown }[] =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { event: string });

describe('graceful shutdown of a node process', () => {
  it('on SIGTERM stops children in reverse start order and exits 0', async () => {
    const node = await startNodeProcess('clean', 5_000);
    expect((await fetch(`${node.adminUrl}/health`)).status).toBe(200);
    node.child.kill('SIGTERM');
    const { code, signal, stdout, stderr } = await node.exit;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(stdout.split('\n').filter((line) => line.startsWith('terminate'))).toEqual([
      'terminate c shutdown',
      'terminate b shutdown',
      'terminate a shutdown',
    ]);
    const logged = events(stderr);
    expect(logged.map((entry) => entry.event)).toEqual(['node.started', 'node.stopping', 'node.stopped']);
    expect(logged[1]).toMatchObject({ trigger: 'SIGTERM', deadlineMs: 5_000 });
    expect(logged[2]).toMatchObject({ clean: true, exitCode: 0, rootExit: 'shutdown' });
    await expect(fetch(`${node.adminUrl}/health`)).rejects.toThrow();
  }, 30_000);

  it('on SIGINT does the same', async () => {
    const node = await startNodeProcess('clean', 5_000);
    node.child.kill('SIGINT');
    const { code, stdout, stderr } = await node.exit;
    expect(code).toBe(0);
    expect(stdout).toContain('terminate c shutdown\nterminate b shutdown\nterminate a shutdown\n');
    expect(events(stderr)[1]).toMatchObject({ event: 'node.stopping', trigger: 'SIGINT' });
  }, 30_000);

  it('exits non-zero when a child ignores shutdown past the deadline', async () => {
    const node = await startNodeProcess('hang', 400);
    const sentAt = Date.now();
    node.child.kill('SIGTERM');
    const { code, signal, stdout, stderr } = await node.exit;
    expect({ code, signal }).toEqual({ code: 1, signal: null });
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(400);
    // c stopped, then b started stopping and hung there; a was killed without a terminate.
    expect(stdout.split('\n').filter((line) => line.startsWith('terminate'))).toEqual(['terminate c shutdown', 'terminate b shutdown']);
    const logged = events(stderr);
    expect(logged.map((entry) => entry.event)).toEqual(['node.started', 'node.stopping', 'node.deadline_exceeded', 'node.stopped']);
    expect(logged[2]).toMatchObject({ level: 50, deadlineMs: 400, cause: 'deadline' }); // pino's numeric level
    expect(logged[3]).toMatchObject({ clean: false, exitCode: 1 });
  }, 30_000);

  it('a second signal while stopping forces the stop at once', async () => {
    const node = await startNodeProcess('hang', 60_000);
    node.child.kill('SIGTERM');
    const firstAt = Date.now();
    // Wait until b hangs in its terminate, then insist (past the window in which copies of the first signal are ignored).
    await new Promise<void>((resolve) => {
      let seen = '';
      node.child.stdout.on('data', (chunk: string) => {
        seen += chunk;
        if (seen.includes('terminate b')) resolve();
      });
    });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstAt + REPEAT_SIGNAL_WINDOW_MS + 200 - Date.now())));
    node.child.kill('SIGTERM');
    const { code, stderr } = await node.exit;
    expect(code).toBe(1);
    const logged = events(stderr).map((entry) => entry.event);
    expect(logged).toEqual(['node.started', 'node.stopping', 'node.forced', 'node.deadline_exceeded', 'node.stopped']);
    expect(events(stderr)[3]).toMatchObject({ cause: 'forced' });
  }, 30_000);
});
