/** Task-queue child processes for the replay and chaos tests (see fixtures/task-child.ts). */
import { spawn, type ChildProcess } from 'node:child_process';
import type { TaskBackendCase } from './stores.js';

export interface TaskChild {
  readonly process: ChildProcess;
  /** Payloads whose handler started, in order (a payload twice: it ran twice). */
  readonly runs: number[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once the child printed `line`. */
  saw(line: string): Promise<void>;
  stderr(): string;
}

export function childEnv(backend: TaskBackendCase, table: string): NodeJS.ProcessEnv {
  return backend.name === 'postgres'
    ? { TASK_BACKEND: 'postgres', TASK_PG_HOST: backend.pg!.host, TASK_PG_PORT: String(backend.pg!.port), TASK_PG_USER: backend.pg!.user, TASK_PG_DB: backend.pg!.database, TASK_TABLE: table }
    : { TASK_BACKEND: 'sqlite', TASK_FILE: backend.file!, TASK_TABLE: table };
}

export function startChild(script: string, env: NodeJS.ProcessEnv): TaskChild {
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const runs: number[] = [];
  const seen = new Set<string>();
  const waiters = new Map<string, (() => void)[]>();
  let buffer = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      if (line.startsWith('R ')) runs.push(Number(line.slice(2)));
      else {
        seen.add(line);
        for (const wake of waiters.get(line) ?? []) wake();
        waiters.delete(line);
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    process: child,
    runs,
    exited,
    stderr: () => stderr,
    saw: (line) =>
      seen.has(line)
        ? Promise.resolve()
        : new Promise((resolve, reject) => {
            waiters.set(line, [...(waiters.get(line) ?? []), resolve]);
            void exited.then(({ code, signal }) => reject(new Error(`child exited (${code ?? signal}) before ${line}: ${stderr.slice(-2_000)}`)));
          }),
  };
}
