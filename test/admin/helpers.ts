import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ExitReason } from '../../src/actors/index.js';
import { startNode, type MoloNode, type NodeOptions } from '../../src/admin/index.js';
import { GenServer } from '../../src/behaviours/index.js';
import { afterEachTest } from '../support/file-hooks.js';
import { testSystem } from '../support/systems.js';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface LoggedEvent {
  readonly level: string;
  readonly event: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

const running = new Set<MoloNode>();

// A safety net: a test that failed half-way must not leave an HTTP server listening.
afterEachTest(async () => {
  for (const node of running) await node.stop();
  running.clear();
});

/** A node on a leak-checked test system, HTTP on an ephemeral loopback port, no signal handlers. */
export async function startTestNode(
  options: Omit<NodeOptions, 'system'> & { readonly system?: NodeOptions['system'] },
): Promise<{ node: MoloNode; events: LoggedEvent[] }> {
  const events: LoggedEvent[] = [];
  const node = await startNode({
    system: testSystem(),
    admin: { port: 0 },
    signals: false,
    log: (level, event, fields) => events.push({ level, event, fields }),
    ...options,
  });
  running.add(node);
  return { node, events };
}

export async function getJson<T = Record<string, unknown>>(url: string): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as T, headers: response.headers };
}

/** A worker that counts calls, crashes on `crash`, and (trapping exits) records its terminate. */
export class Counter extends GenServer<'get' | 'crash', number> {
  count = 0;
  constructor(
    readonly id: string = 'counter',
    readonly stops: string[] = [],
  ) {
    super();
  }
  override init(): void {
    this.ctx.trapExit(true);
  }
  override handleCall(request: 'get' | 'crash'): number {
    if (request === 'crash') throw new Error(`${this.id} crashed on purpose`);
    return ++this.count;
  }
  override terminate(reason: ExitReason): void {
    if (reason === 'shutdown') this.stops.push(this.id);
  }
}

export interface ProcessRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI from source as a child process: `node --import tsx src/cli/molo.ts ...args`. */
export function runMolo(args: readonly string[], env: Record<string, string> = {}): Promise<ProcessRun> {
  return runNode(['--import', 'tsx', 'src/cli/molo.ts', ...args], env);
}

export function runNode(args: readonly string[], env: Record<string, string> = {}): Promise<ProcessRun> {
  const { MOLO_ADMIN_URL: _inherited, ...inherited } = process.env;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: REPO,
      env: { ...inherited, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
