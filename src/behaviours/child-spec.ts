import { isCleanExit, MAX_TIMEOUT_MS, type ActorRuntime, type ExitReason, type Ref } from '../actors/index.js';
import { InvalidChildSpec } from './errors.js';
import { GenServer, type GenServerStartOptions } from './gen-server.js';

export type RestartType = 'permanent' | 'transient' | 'temporary';
export type ShutdownPolicy = 'brutal_kill' | 'infinity' | number;
export type ChildType = 'worker' | 'supervisor';

/** What a child's start function is given. */
export interface ChildStartContext {
  readonly system: ActorRuntime;
  /** The supervisor: link the child to it at spawn (`link: parent`). */
  readonly parent: Ref;
  /** Extra arguments of a dynamic child (`Supervisor.startChild(sup, ...args)`). */
  readonly args: readonly unknown[];
}

/**
 * Starts the child and returns its ref once it is ready; `undefined` means OTP's `ignore`
 * (nothing started, nothing wrong). A rejection is a failed start.
 */
export type ChildStart = (context: ChildStartContext) => Ref | undefined | PromiseLike<Ref | undefined>;

/** Exponential restart delay for children that ask for it (OS programs, flaky connections). */
export interface RestartBackoff {
  readonly initialMs: number;
  readonly maxMs: number;
}

export interface ChildSpec {
  readonly id: string;
  readonly start: ChildStart;
  /** Default `permanent`. */
  readonly restart?: RestartType;
  /** Default 5,000 ms for a worker, `infinity` for a supervisor (as OTP). */
  readonly shutdown?: ShutdownPolicy;
  /** Default `worker`. */
  readonly type?: ChildType;
  /** Absent: restart at once, as OTP does. */
  readonly backoff?: RestartBackoff;
}

export interface ResolvedChildSpec {
  readonly id: string;
  readonly start: ChildStart;
  readonly restart: RestartType;
  readonly shutdown: ShutdownPolicy;
  readonly type: ChildType;
  readonly backoff: RestartBackoff | undefined;
}

export const DEFAULT_WORKER_SHUTDOWN_MS = 5_000;
export const MAX_BACKOFF_MS = 3_600_000;

/** Validates once at the boundary; the supervisor only ever sees the resolved shape. */
export function resolveChildSpec(spec: ChildSpec): ResolvedChildSpec {
  if (spec === null || typeof spec !== 'object') throw new InvalidChildSpec(undefined, 'must be an object');
  const { id } = spec;
  if (typeof id !== 'string' || id.length === 0) throw new InvalidChildSpec(undefined, 'id must be a non-empty string');
  if (typeof spec.start !== 'function') throw new InvalidChildSpec(id, 'start must be a function');
  const restart = spec.restart ?? 'permanent';
  if (restart !== 'permanent' && restart !== 'transient' && restart !== 'temporary') {
    throw new InvalidChildSpec(id, `restart must be permanent, transient or temporary, got ${String(restart)}`);
  }
  const type = spec.type ?? 'worker';
  if (type !== 'worker' && type !== 'supervisor') throw new InvalidChildSpec(id, `type must be worker or supervisor, got ${String(type)}`);
  const shutdown = spec.shutdown ?? (type === 'supervisor' ? 'infinity' : DEFAULT_WORKER_SHUTDOWN_MS);
  if (
    shutdown !== 'brutal_kill' &&
    shutdown !== 'infinity' &&
    !(typeof shutdown === 'number' && Number.isInteger(shutdown) && shutdown >= 0 && shutdown <= MAX_TIMEOUT_MS)
  ) {
    throw new InvalidChildSpec(id, `shutdown must be brutal_kill, infinity or 0..${MAX_TIMEOUT_MS} ms, got ${String(shutdown)}`);
  }
  const backoff = spec.backoff;
  if (backoff !== undefined) {
    const valid = (ms: number): boolean => Number.isInteger(ms) && ms >= 0 && ms <= MAX_BACKOFF_MS;
    if (!valid(backoff.initialMs) || !valid(backoff.maxMs) || backoff.maxMs < backoff.initialMs) {
      throw new InvalidChildSpec(id, `backoff needs 0 <= initialMs <= maxMs <= ${MAX_BACKOFF_MS}`);
    }
  }
  return { id, start: spec.start, restart, shutdown, type, backoff };
}

/** OTP's restart rule: permanent always, transient on an abnormal exit, temporary never. */
export function shouldRestart(restart: RestartType, reason: ExitReason): boolean {
  switch (restart) {
    case 'permanent':
      return true;
    case 'transient':
      return !isCleanExit(reason);
    case 'temporary':
      return false;
    default: {
      const unknownType: never = restart;
      throw new Error(`unknown restart type ${String(unknownType)}`);
    }
  }
}

/** Delay before restart attempt number `attempt` (0-based): doubling from `initialMs`, capped. */
export function backoffDelay(backoff: RestartBackoff | undefined, attempt: number): number {
  if (backoff === undefined) return 0;
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(attempt, 40));
}

/** A child spec for a GenServer: a fresh instance from `create` on every (re)start, linked to the supervisor. */
export function worker(
  id: string,
  create: (...args: never[]) => GenServer<never, unknown, unknown, unknown, unknown>,
  options: Omit<ChildSpec, 'id' | 'start'> & { readonly server?: Omit<GenServerStartOptions, 'link'> } = {},
): ChildSpec {
  const { server, ...spec } = options;
  return {
    id,
    ...spec,
    start: ({ system, parent, args }) =>
      GenServer.start(system, () => (create as (...a: unknown[]) => GenServer<never>)(...args), {
        name: server?.name,
        mailbox: server?.mailbox,
        trapExit: server?.trapExit,
        link: parent,
      }),
  };
}
