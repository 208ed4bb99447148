/**
 * Starting a host (a worker thread or a child process) and carrying bytes to and from it. The host
 * runs `host-main`; from source (tsx, vitest) it is a .ts file, so the host loads tsx first.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ShutdownWith } from '../exit.js';

/** Where a placed actor runs: the main event loop, a worker thread, or a child process. */
import type { Placement } from './types.js';

export type { Placement } from './types.js';
export type HostPlacement = Exclude<Placement, 'loop'>;

/** What a host needs to start its own system: the same node, its own creation, the parent's limits. */
export interface HostInit {
  readonly node: string;
  readonly creation: number;
  readonly parent: number;
  readonly payloadLimitBytes: number;
  readonly callTimeoutMs: number;
  readonly placement: HostPlacement;
  /** V8 old-generation cap of the host, in MB; over it the host dies (out of memory). */
  readonly maxHeapMb?: number | undefined;
}

export interface HostEvents {
  message(data: unknown): void;
  /** The host is gone; `reason` is what its actors' links and monitors see. Called once. */
  exit(reason: ShutdownWith, error: Error | undefined): void;
}

export interface HostChannel {
  readonly pid: number | undefined;
  readonly threadId: number | undefined;
  post(bytes: Uint8Array): void;
  /** Stops the host now (worker.terminate, SIGKILL). */
  terminate(): void;
}

const fromSource = import.meta.url.endsWith('.ts');
const entryUrl = new URL(`./host-main.${fromSource ? 'ts' : 'js'}`, import.meta.url);

/** tsx's `--import` loader and its register API, when the host entry is TypeScript (from source). */
function tsxModule(specifier: 'tsx' | 'tsx/esm/api'): string | undefined {
  if (!fromSource) return undefined;
  const require = createRequire(import.meta.url);
  if (specifier === 'tsx') return pathToFileURL(require.resolve('tsx')).href;
  // The ESM build of the API (require.resolve would give the CommonJS one): read from tsx's exports.
  const manifest = require.resolve('tsx/package.json');
  const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as {
    exports: Record<string, { import?: { default?: string } }>;
  };
  const target = exports['./esm/api']?.import?.default ?? './dist/esm/api/index.mjs';
  return pathToFileURL(join(dirname(manifest), target)).href;
}

/**
 * A worker's execArgv cannot register module hooks before its entry loads, so from source the
 * worker starts from this script, which registers tsx's hooks and then imports the entry.
 */
const THREAD_BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.loader) (await import(workerData.loader)).register();
  await import(workerData.entry);
})().catch((error) => setImmediate(() => { throw error; }));
`;

export function startHost(init: HostInit, events: HostEvents): HostChannel {
  return init.placement === 'thread' ? startThread(init, events) : startProcess(init, events);
}

function startThread(init: HostInit, events: HostEvents): HostChannel {
  const loader = tsxModule('tsx/esm/api');
  const workerData = { init, entry: entryUrl.href, loader };
  const resourceLimits = init.maxHeapMb === undefined ? undefined : { maxOldGenerationSizeMb: init.maxHeapMb };
  const worker =
    loader === undefined
      ? new Worker(entryUrl, { workerData, resourceLimits })
      : new Worker(THREAD_BOOT, { eval: true, workerData, resourceLimits });
  let lastError: Error | undefined;
  worker.on('message', (data: unknown) => events.message(data));
  // Without a listener an error in the host would be rethrown here and take the main process down.
  worker.on('error', (error: Error) => {
    lastError = error;
  });
  worker.on('exit', (code: number) => events.exit({ shutdown: { thread_exit: code } }, lastError));
  return {
    pid: process.pid,
    threadId: worker.threadId,
    post: (bytes) => worker.postMessage(bytes),
    terminate: () => void worker.terminate(),
  };
}

function startProcess(init: HostInit, events: HostEvents): HostChannel {
  const loader = tsxModule('tsx');
  const execArgv =
    loader === undefined || process.execArgv.some((arg) => arg.includes('tsx'))
      ? [...process.execArgv]
      : [...process.execArgv, '--import', loader];
  if (init.maxHeapMb !== undefined) execArgv.push(`--max-old-space-size=${init.maxHeapMb}`);
  const child: ChildProcess = fork(fileURLToPath(entryUrl), [JSON.stringify(init)], {
    execArgv,
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let lastError: Error | undefined;
  let exited = false;
  const exit = (code: number | null, signal: NodeJS.Signals | null): void => {
    if (exited) return;
    exited = true;
    events.exit({ shutdown: { process_exit: code, signal } }, lastError);
  };
  child.on('message', (data: unknown) => events.message(data));
  child.on('error', (error: Error) => {
    lastError = error;
    // A process that never started emits no exit.
    if (child.pid === undefined) exit(null, null);
  });
  child.on('exit', exit);
  return {
    pid: child.pid,
    threadId: undefined,
    post(bytes) {
      // A closed channel means the process is going: its exit event reports it.
      if (child.connected) child.send(bytes, (error: Error | null) => void error);
    },
    terminate() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
