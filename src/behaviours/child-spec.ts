import { exponentialBackoff } from '../actors/backoff.js';
import { unknownOptionKey } from '../actors/option-keys.js';
import { isCleanExit, MAX_TIMEOUT_MS, Ref, type ActorRuntime, type ExitReason } from '../actors/index.js';
import { InvalidChildSpec, StartIgnored } from './errors.js';
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

/** OTP's `{ok, Pid, Extra}`: a started child plus information its starter hands back. */
export interface StartedChild {
  readonly ref: Ref | undefined;
  readonly extra?: unknown;
}

/**
 * Starts the child and returns its ref once it is ready; `undefined` means OTP's `ignore`
 * (nothing started, nothing wrong); `{ ref, extra }` hands back extra information with it
 * (`Supervisor.startChildWithExtra` returns it). A rejection is a failed start, its value the reason.
 */
export type ChildStart = (context: ChildStartContext) => Ref | undefined | StartedChild | PromiseLike<Ref | undefined | StartedChild>;

/** OTP's `auto_shutdown` supervisor flag: when the exit of significant children stops the supervisor. */
export type AutoShutdown = 'never' | 'any_significant' | 'all_significant';

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
  /**
   * OTP 24's significant child: its own exit (not one the supervisor caused) may stop the
   * supervisor, per its `autoShutdown`. Only for transient and temporary children. Default false.
   */
  readonly significant?: boolean;
}

/** A child spec with every default filled in: what `Supervisor.getChildSpec` answers (OTP's get_childspec). */
export interface ResolvedChildSpec {
  readonly id: string;
  readonly start: ChildStart;
  readonly restart: RestartType;
  readonly shutdown: ShutdownPolicy;
  readonly type: ChildType;
  readonly backoff: RestartBackoff | undefined;
  readonly significant: boolean;
}

export const DEFAULT_WORKER_SHUTDOWN_MS = 5_000;
/** Every key a child spec may carry: any other is a typo (`restarts` for `restart`), refused rather than ignored. */
const CHILD_SPEC_KEYS: readonly (keyof ChildSpec)[] = ['id', 'start', 'restart', 'shutdown', 'type', 'backoff', 'significant'];
const BACKOFF_KEYS: readonly (keyof RestartBackoff)[] = ['initialMs', 'maxMs'];
export const MAX_BACKOFF_MS = 3_600_000;

/**
 * Validates once at the boundary; the supervisor only ever sees the resolved shape. `autoShutdown`
 * is the supervisor's flag, which decides whether `significant` is allowed (as OTP's check_childspec).
 */
export function resolveChildSpec(spec: ChildSpec, autoShutdown: AutoShutdown = 'never'): ResolvedChildSpec {
  if (spec === null || typeof spec !== 'object') throw new InvalidChildSpec(undefined, 'must be an object', 'spec', spec);
  const { id } = spec;
  if (typeof id !== 'string' || id.length === 0) throw new InvalidChildSpec(undefined, 'id must be a non-empty string', 'id', id);
  const unknown = unknownOptionKey(spec, CHILD_SPEC_KEYS);
  if (unknown !== undefined) throw new InvalidChildSpec(id, `${unknown.key}: ${unknown.detail}`, unknown.key, (spec as unknown as Record<string, unknown>)[unknown.key]);
  if (typeof spec.start !== 'function') throw new InvalidChildSpec(id, 'start must be a function', 'start', spec.start);
  const restart = spec.restart ?? 'permanent';
  if (restart !== 'permanent' && restart !== 'transient' && restart !== 'temporary') {
    throw new InvalidChildSpec(id, `restart must be permanent, transient or temporary, got ${String(restart)}`, 'restart', restart);
  }
  const type = spec.type ?? 'worker';
  if (type !== 'worker' && type !== 'supervisor') {
    throw new InvalidChildSpec(id, `type must be worker or supervisor, got ${String(type)}`, 'type', type);
  }
  const significant = spec.significant ?? false;
  if (typeof significant !== 'boolean') throw new InvalidChildSpec(id, `significant must be a boolean, got ${String(significant)}`, 'significant', significant);
  if (significant && autoShutdown === 'never') {
    throw new InvalidChildSpec(id, 'significant needs the supervisor\'s autoShutdown to be any_significant or all_significant', 'significant', significant);
  }
  if (significant && restart === 'permanent') {
    throw new InvalidChildSpec(id, 'a permanent child cannot be significant (it is always restarted)', 'significant', significant);
  }
  const shutdown = spec.shutdown ?? (type === 'supervisor' ? 'infinity' : DEFAULT_WORKER_SHUTDOWN_MS);
  if (
    shutdown !== 'brutal_kill' &&
    shutdown !== 'infinity' &&
    !(typeof shutdown === 'number' && Number.isInteger(shutdown) && shutdown >= 0 && shutdown <= MAX_TIMEOUT_MS)
  ) {
    throw new InvalidChildSpec(id, `shutdown must be brutal_kill, infinity or 0..${MAX_TIMEOUT_MS} ms, got ${String(shutdown)}`, 'shutdown', shutdown);
  }
  const backoff = spec.backoff;
  if (backoff !== undefined) {
    const unknownBackoff = backoff !== null && typeof backoff === 'object' ? unknownOptionKey(backoff, BACKOFF_KEYS) : undefined;
    if (unknownBackoff !== undefined) throw new InvalidChildSpec(id, `backoff.${unknownBackoff.key}: ${unknownBackoff.detail}`, 'backoff', backoff);
    const valid = (ms: number): boolean => Number.isInteger(ms) && ms >= 0 && ms <= MAX_BACKOFF_MS;
    if (!valid(backoff.initialMs) || !valid(backoff.maxMs) || backoff.maxMs < backoff.initialMs) {
      throw new InvalidChildSpec(id, `backoff needs 0 <= initialMs <= maxMs <= ${MAX_BACKOFF_MS}`, 'backoff', backoff);
    }
  }
  return { id, start: spec.start, restart, shutdown, type, backoff, significant };
}

/** A start function's answer as OTP's `{ok, Pid}`, `{ok, Pid, Extra}` or `ignore`. */
export function startedChild(result: Ref | undefined | StartedChild): StartedChild {
  if (result === undefined || result instanceof Ref) return { ref: result };
  return result;
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
  return exponentialBackoff({ baseMs: backoff.initialMs, capMs: backoff.maxMs }, attempt);
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
      }).catch((error: unknown) => {
        // OTP's ignore from init: the supervisor records the child as not started.
        if (error instanceof StartIgnored) return undefined;
        throw error;
      }),
  };
}
