/**
 * One run of a program: the OS process, its output split into log lines, and its end reported
 * exactly once (spawn failure or exit). The actor hears of both as messages; nothing here touches
 * actor state.
 */
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { LineSplitter } from './line-splitter.js';
import { safeLog, type ProgramLogger } from './logger.js';
import { signalGroup, spawnInGroup } from './os-process.js';
import type { ResolvedProgramSpec } from './spec.js';

export interface ProgramProcessEvents {
  /** The OS could not start it (pid never assigned): ENOENT, EACCES, a bad cwd... */
  spawnFailed(error: Error): void;
  exited(code: number | null, signal: NodeJS.Signals | null): void;
  /** Each output line, as it is logged (the supervisor keeps a tail of them). */
  line?(stream: 'stdout' | 'stderr', pid: number | undefined, line: string): void;
}

export class ProgramProcess {
  readonly #child: ChildProcess;
  #ended = false;

  constructor(spec: ResolvedProgramSpec, logger: ProgramLogger, maxLineBytes: number, events: ProgramProcessEvents) {
    const child = spawnInGroup(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    const pid = child.pid;
    pipeLines(child.stdout, maxLineBytes, (line) => {
      safeLog(logger, 'info', { stream: 'stdout', pid }, line);
      events.line?.('stdout', pid, line);
    });
    pipeLines(child.stderr, maxLineBytes, (line) => {
      safeLog(logger, 'warn', { stream: 'stderr', pid }, line);
      events.line?.('stderr', pid, line);
    });
    child.on('error', (error) => {
      if (this.#ended) return;
      if (child.pid === undefined) {
        this.#ended = true;
        events.spawnFailed(error);
      }
      // Other errors (a failed kill) change nothing: the exit, when it comes, is what counts.
    });
    child.once('exit', (code, signal) => {
      if (this.#ended) return;
      this.#ended = true;
      events.exited(code, signal);
    });
  }

  /** Set when the spawn succeeded. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** True until the exit (or spawn failure) has been seen. */
  get alive(): boolean {
    return !this.#ended && this.#child.pid !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Signals the program's whole process group; false when it is already gone. */
  signal(signal: NodeJS.Signals): boolean {
    return signalGroup(this.#child, signal);
  }
}

function pipeLines(stream: Readable | null, maxLineBytes: number, emit: (line: string) => void): void {
  if (stream === null) return;
  const splitter = new LineSplitter(maxLineBytes, emit);
  stream.on('data', (chunk: Buffer) => splitter.push(chunk));
  stream.once('end', () => splitter.end());
  stream.on('error', () => splitter.end());
}
