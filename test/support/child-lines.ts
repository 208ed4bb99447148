import { afterEach } from 'vitest';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { projectRoot } from './run-script.js';

export type LineChild = ChildProcessByStdio<Writable, Readable, Readable>;

/**
 * Runs a TypeScript fixture of the project as a child process (through tsx) that reports on stdout
 * one line at a time: `ready` resolves `ready`, a line starting with `{` is parsed and handed to
 * `onJson`. `ready` rejects with the child's stderr if it exits first.
 */
export function spawnLines<T>(script: string, args: readonly string[], onJson: (value: T) => void): { child: LineChild; ready: Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: projectRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let buffer = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line === 'ready') resolve();
        else if (line.startsWith('{')) onJson(JSON.parse(line) as T);
      }
    });
    child.on('close', (code) => reject(new Error(`${script} exited (${String(code)}): ${stderr}`)));
  });
  ready.catch(() => undefined);
  return { child, ready };
}

/** A set of children killed (SIGKILL) after each test of the calling file, if still running. */
export function killedAfterEach(): Set<LineChild> {
  const spawned = new Set<LineChild>();
  afterEach(() => {
    for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    spawned.clear();
  });
  return spawned;
}

/** Polls `find` every 50 ms until it returns something (not undefined or false), or throws after `timeoutMs`. */
export async function until<T>(find: () => T | undefined | false, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined && found !== false) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
