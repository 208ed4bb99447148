/**
 * Program specs: what a supervised OS program is, its defaults and caps, validated once at the
 * boundary. Everything past `resolveProgramSupervisorSpec` sees only the resolved shape.
 */
import { InvalidProgramSpec, TooManyPrograms } from '../errors.js';
import type { ProgramLogger } from './logger.js';
import type { Logger } from '../../telemetry/logger-api.js';

/** supervisord's autorestart: `always` (true), `on-failure` (unexpected), `never` (false). */
export type ProgramRestart = 'always' | 'on-failure' | 'never';

/** What happens once a health check has failed `failures` times in a row. */
export type UnhealthyAction = 'restart' | 'report';

/** Signals a program may ask to be stopped with (SIGKILL follows after `stopTimeoutMs`). */
export type StopSignal = 'SIGTERM' | 'SIGINT' | 'SIGQUIT' | 'SIGHUP' | 'SIGUSR1' | 'SIGUSR2';

/** Healthy when a TCP connection to `host:port` opens within the timeout. */
export interface TcpProbeSpec {
  readonly type: 'tcp';
  /** Default `127.0.0.1`. */
  readonly host?: string;
  readonly port: number;
}

/** Healthy when the command exits with code 0 within the timeout. */
export interface CommandProbeSpec {
  readonly type: 'command';
  readonly command: string;
  readonly args?: readonly string[];
  readonly cwd?: string;
  /** Added to the supervisor's own environment. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface ProbeTiming {
  /** Time between the end of one probe and the start of the next; default 10,000 ms (S7-4). */
  readonly intervalMs?: number;
  /** A probe that has not answered by then failed; default min(intervalMs, 5,000 ms). */
  readonly timeoutMs?: number;
  /** Consecutive failures that make the program unhealthy; default 3 (S7-4). */
  readonly failures?: number;
  /** Default `restart`; `report` only marks the program unhealthy in status and logs. */
  readonly onUnhealthy?: UnhealthyAction;
}

export type HealthCheckSpec = (TcpProbeSpec | CommandProbeSpec) & ProbeTiming;

/** Restart delay: doubles from `initialMs` per restart in a row, capped at `maxMs`. */
export interface ProgramBackoffSpec {
  /** Default 1,000 ms (S7-4); 0 restarts at once. */
  readonly initialMs?: number;
  /** Default 60,000 ms (S7-4). */
  readonly maxMs?: number;
}

export interface ProgramSpec {
  /** Unique within its supervisor; letters, digits, `_`, `-`, `.`, at most 64 characters. */
  readonly name: string;
  /** Executable, looked up in PATH; not run through a shell. */
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the supervisor's own environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Default `on-failure` (supervisord's `unexpected`). */
  readonly restart?: ProgramRestart;
  /** Restarts (and failed starts) allowed within `windowMs` before the program is fatal; default 5. */
  readonly maxRestarts?: number;
  /** Default 60,000 ms. */
  readonly windowMs?: number;
  readonly backoff?: ProgramBackoffSpec;
  /** Default SIGTERM. */
  readonly stopSignal?: StopSignal;
  /** Wait after the stop signal before SIGKILL; default 10,000 ms, cap {@link MAX_STOP_TIMEOUT_MS}. */
  readonly stopTimeoutMs?: number;
  /**
   * supervisord's startsecs: the program counts as running once it has stayed up this long; an
   * exit before that is a failed start. Default 0 (running as soon as the OS has spawned it).
   */
  readonly startMs?: number;
  /** Start with the supervisor; default true. A program with `autostart: false` waits for `startProgram`. */
  readonly autostart?: boolean;
  readonly health?: HealthCheckSpec;
}

export interface ProgramSupervisorSpec {
  readonly programs: readonly ProgramSpec[];
  /** Default and cap {@link MAX_PROGRAMS} (S7-10, workers per group). */
  readonly maxPrograms?: number;
  /** Longer output lines are split into pieces of at most this many bytes; default 64 KiB. */
  readonly maxLineBytes?: number;
  /**
   * Where program output and lifecycle events go: a pino logger (or anything with its `info`,
   * `warn`, `error` and optional `child`). Default: the system's logger, bound with the supervisor's ref.
   */
  readonly logger?: Logger | ProgramLogger;
}

export const DEFAULT_MAX_RESTARTS = 5;
export const DEFAULT_RESTART_WINDOW_MS = 60_000;
export const DEFAULT_BACKOFF_INITIAL_MS = 1_000;
export const DEFAULT_BACKOFF_MAX_MS = 60_000;
export const DEFAULT_STOP_TIMEOUT_MS = 10_000;
export const DEFAULT_PROBE_INTERVAL_MS = 10_000;
export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;
export const DEFAULT_PROBE_FAILURES = 3;
export const DEFAULT_LINE_BYTES = 65_536;
/** S7-10: at most 64 workers per group. */
export const MAX_PROGRAMS = 64;
export const MAX_STOP_TIMEOUT_MS = 300_000;
export const MAX_BACKOFF_MS = 3_600_000;
export const MAX_RESTART_WINDOW_MS = 86_400_000;
export const MAX_RESTARTS_CAP = 10_000;
export const MAX_PROBE_INTERVAL_MS = 86_400_000;
export const MAX_PROBE_FAILURES = 1_000;
export const MAX_LINE_BYTES = 1_048_576;
export const MAX_ARGS = 1_024;
export const MAX_ARG_LENGTH = 131_072;
export const MAX_ENV_ENTRIES = 1_024;
export const MAX_NAME_LENGTH = 64;
const NAME_PATTERN = /^[A-Za-z0-9_.-]+$/;
const STOP_SIGNALS: readonly StopSignal[] = ['SIGTERM', 'SIGINT', 'SIGQUIT', 'SIGHUP', 'SIGUSR1', 'SIGUSR2'];

export type ResolvedHealthCheck = (
  | { readonly type: 'tcp'; readonly host: string; readonly port: number }
  | {
      readonly type: 'command';
      readonly command: string;
      readonly args: readonly string[];
      readonly cwd: string | undefined;
      readonly env: Readonly<Record<string, string>>;
    }
) & {
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly failures: number;
  readonly onUnhealthy: UnhealthyAction;
};

export interface ResolvedProgramSpec {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string | undefined;
  readonly restart: ProgramRestart;
  readonly maxRestarts: number;
  readonly windowMs: number;
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  readonly stopSignal: StopSignal;
  readonly stopTimeoutMs: number;
  readonly startMs: number;
  readonly autostart: boolean;
  readonly health: ResolvedHealthCheck | undefined;
}

export interface ResolvedProgramSupervisorSpec {
  readonly programs: readonly ResolvedProgramSpec[];
  readonly maxPrograms: number;
  readonly maxLineBytes: number;
  readonly logger: ProgramLogger | undefined;
}

export function resolveProgramSupervisorSpec(spec: ProgramSupervisorSpec): ResolvedProgramSupervisorSpec {
  if (spec === null || typeof spec !== 'object') throw new InvalidProgramSpec(undefined, 'spec', 'must be an object');
  const maxPrograms = integer(undefined, 'maxPrograms', spec.maxPrograms ?? MAX_PROGRAMS, 1, MAX_PROGRAMS);
  const maxLineBytes = integer(undefined, 'maxLineBytes', spec.maxLineBytes ?? DEFAULT_LINE_BYTES, 16, MAX_LINE_BYTES);
  if (!Array.isArray(spec.programs)) throw new InvalidProgramSpec(undefined, 'programs', 'must be an array');
  if (spec.programs.length > maxPrograms) throw new TooManyPrograms(maxPrograms, spec.programs.length);
  const logger = spec.logger;
  if (logger !== undefined && (typeof logger.info !== 'function' || typeof logger.warn !== 'function' || typeof logger.error !== 'function')) {
    throw new InvalidProgramSpec(undefined, 'logger', 'needs info, warn and error methods');
  }
  const programs = spec.programs.map(resolveProgramSpec);
  const names = new Set<string>();
  for (const program of programs) {
    if (names.has(program.name)) throw new InvalidProgramSpec(program.name, 'name', 'is used by another program');
    names.add(program.name);
  }
  return { programs, maxPrograms, maxLineBytes, logger };
}

export function resolveProgramSpec(spec: ProgramSpec): ResolvedProgramSpec {
  if (spec === null || typeof spec !== 'object') throw new InvalidProgramSpec(undefined, 'program', 'must be an object');
  const { name } = spec;
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_LENGTH || !NAME_PATTERN.test(name)) {
    throw new InvalidProgramSpec(undefined, 'name', `must be 1..${MAX_NAME_LENGTH} of [A-Za-z0-9_.-], got ${JSON.stringify(name)}`);
  }
  const command = text(name, 'command', spec.command);
  const args = stringList(name, 'args', spec.args);
  const env = environment(name, 'env', spec.env);
  const cwd = spec.cwd === undefined ? undefined : text(name, 'cwd', spec.cwd);
  const restart = spec.restart ?? 'on-failure';
  if (restart !== 'always' && restart !== 'on-failure' && restart !== 'never') {
    throw new InvalidProgramSpec(name, 'restart', `must be always, on-failure or never, got ${String(restart)}`);
  }
  const maxRestarts = integer(name, 'maxRestarts', spec.maxRestarts ?? DEFAULT_MAX_RESTARTS, 0, MAX_RESTARTS_CAP);
  const windowMs = integer(name, 'windowMs', spec.windowMs ?? DEFAULT_RESTART_WINDOW_MS, 1, MAX_RESTART_WINDOW_MS);
  const initialMs = integer(name, 'backoff.initialMs', spec.backoff?.initialMs ?? DEFAULT_BACKOFF_INITIAL_MS, 0, MAX_BACKOFF_MS);
  const maxMs = integer(name, 'backoff.maxMs', spec.backoff?.maxMs ?? Math.max(DEFAULT_BACKOFF_MAX_MS, initialMs), 0, MAX_BACKOFF_MS);
  if (maxMs < initialMs) throw new InvalidProgramSpec(name, 'backoff.maxMs', `must be at least backoff.initialMs (${initialMs})`);
  const stopSignal = spec.stopSignal ?? 'SIGTERM';
  if (!STOP_SIGNALS.includes(stopSignal)) {
    throw new InvalidProgramSpec(name, 'stopSignal', `must be one of ${STOP_SIGNALS.join(', ')}, got ${String(stopSignal)}`);
  }
  const stopTimeoutMs = integer(name, 'stopTimeoutMs', spec.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS, 0, MAX_STOP_TIMEOUT_MS);
  const startMs = integer(name, 'startMs', spec.startMs ?? 0, 0, MAX_RESTART_WINDOW_MS);
  const autostart = spec.autostart ?? true;
  if (typeof autostart !== 'boolean') throw new InvalidProgramSpec(name, 'autostart', 'must be a boolean');
  const health = spec.health === undefined ? undefined : resolveHealthCheck(name, spec.health);
  return {
    name,
    command,
    args,
    env,
    cwd,
    restart,
    maxRestarts,
    windowMs,
    backoff: { initialMs, maxMs },
    stopSignal,
    stopTimeoutMs,
    startMs,
    autostart,
    health,
  };
}

function resolveHealthCheck(name: string, spec: HealthCheckSpec): ResolvedHealthCheck {
  if (spec === null || typeof spec !== 'object') throw new InvalidProgramSpec(name, 'health', 'must be an object');
  const intervalMs = integer(name, 'health.intervalMs', spec.intervalMs ?? DEFAULT_PROBE_INTERVAL_MS, 1, MAX_PROBE_INTERVAL_MS);
  const timeoutMs = integer(
    name,
    'health.timeoutMs',
    spec.timeoutMs ?? Math.min(intervalMs, DEFAULT_PROBE_TIMEOUT_MS),
    1,
    MAX_PROBE_INTERVAL_MS,
  );
  const failures = integer(name, 'health.failures', spec.failures ?? DEFAULT_PROBE_FAILURES, 1, MAX_PROBE_FAILURES);
  const onUnhealthy = spec.onUnhealthy ?? 'restart';
  if (onUnhealthy !== 'restart' && onUnhealthy !== 'report') {
    throw new InvalidProgramSpec(name, 'health.onUnhealthy', `must be restart or report, got ${String(onUnhealthy)}`);
  }
  const timing = { intervalMs, timeoutMs, failures, onUnhealthy };
  switch (spec.type) {
    case 'tcp': {
      const host = spec.host === undefined ? '127.0.0.1' : text(name, 'health.host', spec.host);
      const port = integer(name, 'health.port', spec.port, 1, 65_535);
      return { type: 'tcp', host, port, ...timing };
    }
    case 'command':
      return {
        type: 'command',
        command: text(name, 'health.command', spec.command),
        args: stringList(name, 'health.args', spec.args),
        cwd: spec.cwd === undefined ? undefined : text(name, 'health.cwd', spec.cwd),
        env: environment(name, 'health.env', spec.env),
        ...timing,
      };
    default: {
      const unknownProbe: never = spec;
      throw new InvalidProgramSpec(name, 'health.type', `must be tcp or command, got ${String((unknownProbe as { type?: unknown }).type)}`);
    }
  }
}

function integer(program: string | undefined, option: string, value: number, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidProgramSpec(program, option, `must be an integer in ${min}..${max}, got ${String(value)}`);
  }
  return value;
}

function text(program: string, option: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ARG_LENGTH || value.includes('\0')) {
    throw new InvalidProgramSpec(program, option, `must be a non-empty string of at most ${MAX_ARG_LENGTH} characters without NUL`);
  }
  return value;
}

function stringList(program: string, option: string, value: readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_ARGS) throw new InvalidProgramSpec(program, option, `must be an array of at most ${MAX_ARGS} strings`);
  for (const item of value) {
    if (typeof item !== 'string' || item.length > MAX_ARG_LENGTH || item.includes('\0')) {
      throw new InvalidProgramSpec(program, option, `every entry must be a string of at most ${MAX_ARG_LENGTH} characters without NUL`);
    }
  }
  return Object.freeze([...value]);
}

function environment(program: string, option: string, value: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidProgramSpec(program, option, 'must be an object of strings');
  const entries = Object.entries(value);
  if (entries.length > MAX_ENV_ENTRIES) throw new InvalidProgramSpec(program, option, `must have at most ${MAX_ENV_ENTRIES} entries`);
  for (const [key, item] of entries) {
    if (key.length === 0 || key.includes('=') || key.includes('\0') || typeof item !== 'string' || item.includes('\0')) {
      throw new InvalidProgramSpec(program, option, `entry ${JSON.stringify(key)} must be a NAME=string pair without NUL`);
    }
  }
  return Object.freeze({ ...value });
}
