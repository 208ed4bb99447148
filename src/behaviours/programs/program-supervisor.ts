/**
 * The public face of the program supervisor: start it (alone or as a child of a Supervisor), read
 * its status, and start, stop or restart a program by name. Every operation is a call to the actor.
 */
import type { ActorRuntime, ExitReason, MailboxOptions, Ref } from '../../actors/index.js';
import type { ChildSpec, RestartType, ShutdownPolicy } from '../child-spec.js';
import { GenServer } from '../gen-server.js';
import { TAIL_LIMITS, type ProgramLogs } from './log-tail.js';
import { KILL_WAIT_MS } from './program-shutdown.js';
import { ProgramSupervisorServer } from './program-supervisor-server.js';
import type { ProgramReply, ProgramRequest, ProgramStatus, ProgramSupervisorStatus } from './protocol.js';
import { MAX_STOP_TIMEOUT_MS, resolveProgramSupervisorSpec, type ProgramSupervisorSpec, type ResolvedProgramSupervisorSpec } from './spec.js';

export interface ProgramSupervisorStartOptions {
  /** Registers the supervisor under this name. */
  readonly name?: string;
  /** The parent: linked at spawn; its EXIT stops every program, then this supervisor. */
  readonly link?: Ref;
  readonly mailbox?: MailboxOptions;
}

export interface ProgramSupervisorChildOptions {
  /** Default `permanent`. */
  readonly restart?: RestartType;
  /** Default: the longest `stopTimeoutMs` plus the SIGKILL wait and a second, so programs stop before the parent's kill. */
  readonly shutdown?: ShutdownPolicy;
  /** Registered name of the program supervisor. */
  readonly name?: string;
}

/** Lines `logs` answers when not told. */
export const DEFAULT_LOG_LINES = 100;

/** start, stop and restart wait for processes to stop: up to the largest stop timeout plus the SIGKILL wait. */
const PROGRAM_CALL_TIMEOUT_MS = MAX_STOP_TIMEOUT_MS + KILL_WAIT_MS + 10_000;

export const ProgramSupervisor = {
  /**
   * Validates `spec` (throwing InvalidProgramSpec or TooManyPrograms), starts the actor and spawns
   * the autostart programs; resolves once they are spawned (not necessarily running yet).
   */
  start(system: ActorRuntime, spec: ProgramSupervisorSpec, options: ProgramSupervisorStartOptions = {}): Promise<Ref> {
    return startResolved(system, resolveProgramSupervisorSpec(spec), options);
  },

  /** A child spec for an OTP Supervisor: the spec is validated now; `start` links to the parent. */
  child(id: string, spec: ProgramSupervisorSpec, options: ProgramSupervisorChildOptions = {}): ChildSpec {
    const resolved = resolveProgramSupervisorSpec(spec);
    const longestStop = resolved.programs.reduce((longest, program) => Math.max(longest, program.stopTimeoutMs), 0);
    return {
      id,
      type: 'worker',
      restart: options.restart ?? 'permanent',
      shutdown: options.shutdown ?? longestStop + KILL_WAIT_MS + 1_000,
      start: ({ system, parent }) =>
        startResolved(system, resolved, options.name === undefined ? { link: parent } : { link: parent, name: options.name }),
    };
  },

  /** Every program: state, pid, restarts (in window and in total), health, last exit, next retry. */
  status(system: ActorRuntime, supervisor: Ref | string, timeoutMs?: number): Promise<ProgramSupervisorStatus> {
    return ask(system, supervisor, { op: 'status' }, timeoutMs);
  },

  /**
   * Starts a stopped or fatal program (a fatal one gets a fresh restart budget); resolves with its
   * status once the start has settled: `running`, or `backoff`/`fatal` if it failed.
   * ProgramAlreadyStarted if it is starting, running or in backoff; ProgramNotFound.
   */
  startProgram(system: ActorRuntime, supervisor: Ref | string, name: string): Promise<ProgramStatus> {
    return ask(system, supervisor, { op: 'start', name }, PROGRAM_CALL_TIMEOUT_MS);
  },

  /** Stops a program (stop signal, SIGKILL after its stop timeout); resolves with its status once it is `stopped`. */
  stopProgram(system: ActorRuntime, supervisor: Ref | string, name: string): Promise<ProgramStatus> {
    return ask(system, supervisor, { op: 'stop', name }, PROGRAM_CALL_TIMEOUT_MS);
  },

  /** Stops the program if it is up (or waiting in backoff), then starts it; resolves as `startProgram` does. */
  restartProgram(system: ActorRuntime, supervisor: Ref | string, name: string): Promise<ProgramStatus> {
    return ask(system, supervisor, { op: 'restart', name }, PROGRAM_CALL_TIMEOUT_MS);
  },

  /**
   * The program's last output lines (stdout and stderr, across its runs; at most
   * TAIL_LIMITS.maxLines are kept), the newest `lines` of them (default 100; held to
   * 1..TAIL_LIMITS.maxLines), oldest first. ProgramNotFound.
   */
  logs(system: ActorRuntime, supervisor: Ref | string, name: string, lines: number = DEFAULT_LOG_LINES, timeoutMs?: number): Promise<ProgramLogs> {
    const wanted = Number.isFinite(lines) ? Math.min(TAIL_LIMITS.maxLines, Math.max(1, Math.floor(lines))) : DEFAULT_LOG_LINES;
    return ask(system, supervisor, { op: 'logs', name, lines: wanted }, timeoutMs);
  },

  /** Stops every program, then the supervisor; resolves with its exit reason. */
  stop(system: ActorRuntime, supervisor: Ref | string, reason: ExitReason = 'shutdown'): Promise<ExitReason> {
    return GenServer.stop(system, supervisor, reason);
  },
};

function startResolved(system: ActorRuntime, spec: ResolvedProgramSupervisorSpec, options: ProgramSupervisorStartOptions): Promise<Ref> {
  return GenServer.start(system, () => new ProgramSupervisorServer(spec), { ...options, trapExit: true });
}

async function ask<T>(system: ActorRuntime, supervisor: Ref | string, request: ProgramRequest, timeoutMs: number | undefined): Promise<T> {
  const reply = await system.call<ProgramReply<T>>(supervisor, request, timeoutMs);
  if (!reply.ok) throw reply.error;
  return reply.value;
}
