import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { ActorRuntime, Ref } from '../../../src/actors/index.js';
import { liveProgramProcessCount, ProgramSupervisor, type ProgramLogger, type ProgramSpec, type ProgramStatus } from '../../../src/behaviours/programs/index.js';

export interface LogEntry {
  readonly level: 'info' | 'warn' | 'error';
  readonly fields: Readonly<Record<string, unknown>>;
  readonly msg: string | undefined;
  /** performance.now() when it was logged. */
  readonly at: number;
}

/** A pino-shaped logger that keeps every entry (with `child` bindings merged into the fields). */
export function captureLogger(): { logger: ProgramLogger; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const make = (bindings: Record<string, unknown>): ProgramLogger => {
    const log = (level: LogEntry['level']) => (fields: object, msg?: string) =>
      void entries.push({ level, fields: { ...bindings, ...fields }, msg, at: performance.now() });
    return { info: log('info'), warn: log('warn'), error: log('error'), child: (more) => make({ ...bindings, ...more }) };
  };
  return { logger: make({}), entries };
}

/** Lifecycle events (`spawned`, `exited`, `backoff`, ...) of one program, in order. */
export const eventsOf = (entries: readonly LogEntry[], program: string, event?: string): LogEntry[] =>
  entries.filter((entry) => entry.fields.program === program && entry.fields.event !== undefined && (event === undefined || entry.fields.event === event));

/** Output lines of one program. */
export const linesOf = (entries: readonly LogEntry[], program: string, stream: 'stdout' | 'stderr' = 'stdout'): string[] =>
  entries.filter((entry) => entry.fields.program === program && entry.fields.stream === stream).map((entry) => entry.msg ?? '');

/** A program that runs `script` with this Node.js binary. */
export function nodeProgram(name: string, script: string, options: Omit<ProgramSpec, 'name' | 'command' | 'args'> = {}): ProgramSpec {
  return { name, command: process.execPath, args: ['-e', script], ...options };
}

/** Prints `up <pid>` and then stays up until signalled. */
export const LONG_RUNNING = 'console.log("up " + process.pid); setInterval(() => {}, 1000);';

/** Polls the program's status until `check` holds. */
export async function waitForProgram(
  system: ActorRuntime,
  supervisor: Ref,
  name: string,
  check: (status: ProgramStatus) => boolean,
  what = 'program state',
  timeoutMs = 10_000,
): Promise<ProgramStatus> {
  const deadline = Date.now() + timeoutMs;
  let last: ProgramStatus | undefined;
  for (;;) {
    const status = await ProgramSupervisor.status(system, supervisor);
    last = status.programs.find((program) => program.name === name);
    if (last !== undefined && check(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${name}: ${what}; last status ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const isRunning = (status: ProgramStatus): boolean => status.state === 'running' && status.pid !== undefined;

/** True while `pid` is a live process (a zombie counts as gone: it runs nothing and holds nothing). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Waits (briefly: the kernel reaps asynchronously) until none of `pids` is alive; returns the survivors. */
export async function survivors(pids: readonly number[], timeoutMs = 2_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(pidAlive);
    if (alive.length === 0 || Date.now() > deadline) return alive;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Leak check for OS processes: every program and probe process started by the test has exited. */
export async function expectNoProgramProcesses(): Promise<void> {
  const deadline = Date.now() + 3_000;
  while (liveProgramProcessCount() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  if (liveProgramProcessCount() > 0) throw new Error(`${liveProgramProcessCount()} program process(es) left running`);
}
