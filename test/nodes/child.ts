import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { afterEachTest } from '../support/file-hooks.js';
import { reapChildren } from '../support/reap-children.js';
import { projectRoot } from '../support/run-script.js';

type Child = ChildProcessByStdio<null, Readable, Readable>;

/** Processes of the current test, killed after it. */
const spawned = new Set<Child>();
afterEachTest(() => reapChildren(spawned));

export interface PeerProcess {
  readonly child: Child;
  readonly name: string;
  /** Resolves once the child has exited (after a SIGKILL, say). */
  readonly closed: Promise<void>;
}

/** Starts test/nodes/fixtures/peer-node.ts in its own OS process; resolves with its node name once it listens. */
export function peerProcess(name: string, secret: string, seed?: string): Promise<PeerProcess> {
  const args = ['--import', 'tsx', 'test/nodes/fixtures/peer-node.ts', `${name}@127.0.0.1:0`, secret, ...(seed === undefined ? [] : [seed])];
  const child = spawn(process.execPath, args, { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  spawned.add(child);
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const match = /ready (\S+)\n/.exec(buffer);
      if (match !== null) resolve({ child, name: match[1]!, closed });
    });
    child.once('close', (code) => reject(new Error(`peer ${name} exited (${String(code)}): ${stderr}`)));
  });
}
