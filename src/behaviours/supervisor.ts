import type { ActorRuntime, ExitReason, MailboxOptions, Ref } from '../actors/index.js';
import type { ChildSpec, ResolvedChildSpec, StartedChild } from './child-spec.js';
import { startActor } from './start-actor.js';
import { requestStop } from './stop-request.js';
import type {
  ChildCounts,
  ChildEntry,
  SupervisorModule,
  SupervisorReply,
  SupervisorRequest,
  SupervisorSpec,
  SupervisorStatus,
} from './supervisor-protocol.js';
import { SupervisorRunner } from './supervisor-runner.js';
import { resolveSupervisorSpec } from './supervisor-spec.js';

export interface SupervisorStartOptions {
  readonly name?: string;
  /** The parent: linked at spawn; its EXIT stops this supervisor (children first). */
  readonly link?: Ref;
  readonly mailbox?: MailboxOptions;
  /** OTP's start timeout: past it the supervisor is killed and the start fails with `timeout`. Default: none. */
  readonly timeoutMs?: number;
}

/** Options of the callback form: `args` is what `init` receives. */
export interface SupervisorModuleStartOptions<Args> extends SupervisorStartOptions {
  readonly args?: Args;
}

/**
 * How long a supervisor API call waits by default. OTP waits forever (`infinity`); Molo caps the
 * default so that a stuck supervisor shows up as a CallTimeout rather than a silent hang. Every
 * call takes a `timeoutMs` of its own, `Infinity` included.
 */
export const SUPERVISOR_CALL_TIMEOUT_MS = 60_000;

function start(system: ActorRuntime, spec: SupervisorSpec, options?: SupervisorStartOptions): Promise<Ref>;
function start<Args>(system: ActorRuntime, module: SupervisorModule<Args>, options?: SupervisorModuleStartOptions<Args>): Promise<Ref | undefined>;
function start(
  system: ActorRuntime,
  specOrModule: SupervisorSpec | SupervisorModule<unknown>,
  options: SupervisorModuleStartOptions<unknown> = {},
): Promise<Ref | undefined> {
  // The spec form is checked before anything is spawned, so a bad spec throws at once.
  const runner =
    typeof (specOrModule as SupervisorModule<unknown>).init === 'function'
      ? new SupervisorRunner({ module: specOrModule as SupervisorModule<unknown>, args: options.args, parent: options.link })
      : new SupervisorRunner(resolveSupervisorSpec(specOrModule as SupervisorSpec, options.link));
  return startActor(
    system,
    runner,
    { name: options.name, link: options.link, mailbox: options.mailbox, trapExit: true },
    { timeoutMs: options.timeoutMs, ignored: () => runner.ignored },
  );
}

/**
 * OTP's supervisor: starts children in order, restarts them by strategy within an intensity
 * limit, and stops them in reverse order. Every operation goes through the supervisor's mailbox.
 */
export const Supervisor = {
  /**
   * Resolves once every child has started; rejects with StartFailed if one failed (the others are
   * stopped), once the supervisor has exited. The callback form (`{ init(args) }`, OTP's module)
   * resolves with undefined if `init` answers {@link IGNORE}, and fails the start if it throws or
   * returns invalid flags or specs.
   */
  start,

  /**
   * Adds and starts a child (`spec`), or for `simple_one_for_one` starts one from the template
   * with `args`. Resolves with its ref (undefined if it answered ignore).
   */
  startChild(
    system: ActorRuntime,
    supervisor: Ref | string,
    specOrArgs?: ChildSpec | readonly unknown[],
    timeoutMs?: number,
  ): Promise<Ref | undefined> {
    return Supervisor.startChildWithExtra(system, supervisor, specOrArgs, timeoutMs).then((started) => started.ref);
  },

  /** `startChild` answering OTP's `{ok, Pid, Extra}`: the ref and the extra its start function returned. */
  startChildWithExtra(
    system: ActorRuntime,
    supervisor: Ref | string,
    specOrArgs?: ChildSpec | readonly unknown[],
    timeoutMs?: number,
  ): Promise<StartedChild> {
    const request: SupervisorRequest = Array.isArray(specOrArgs)
      ? { op: 'startChild', spec: undefined, args: specOrArgs }
      : { op: 'startChild', spec: specOrArgs as ChildSpec | undefined, args: [] };
    return ask(system, supervisor, request, timeoutMs);
  },

  /**
   * Stops a child, as OTP: by id on a static supervisor (a ref is not_found there); by ref on a
   * `simple_one_for_one` one (an id is DynamicOnly; a ref that has already exited is fine; the old
   * ref of a child being restarted ends the restart).
   */
  terminateChild(system: ActorRuntime, supervisor: Ref | string, child: string | Ref, timeoutMs?: number): Promise<void> {
    return ask(system, supervisor, { op: 'terminateChild', child }, timeoutMs);
  },

  restartChild(system: ActorRuntime, supervisor: Ref | string, id: string, timeoutMs?: number): Promise<Ref | undefined> {
    return Supervisor.restartChildWithExtra(system, supervisor, id, timeoutMs).then((started) => started.ref);
  },

  /** `restartChild` answering OTP's `{ok, Pid, Extra}`. */
  restartChildWithExtra(system: ActorRuntime, supervisor: Ref | string, id: string, timeoutMs?: number): Promise<StartedChild> {
    return ask(system, supervisor, { op: 'restartChild', id }, timeoutMs);
  },

  deleteChild(system: ActorRuntime, supervisor: Ref | string, id: string, timeoutMs?: number): Promise<void> {
    return ask(system, supervisor, { op: 'deleteChild', id }, timeoutMs);
  },

  /** OTP 26's which_child: one child's entry, by id (static) or ref (dynamic); ChildNotFound otherwise. */
  whichChild(system: ActorRuntime, supervisor: Ref | string, child: string | Ref, timeoutMs?: number): Promise<ChildEntry> {
    return ask(system, supervisor, { op: 'whichChild', child }, timeoutMs);
  },

  /** OTP's get_childspec: the child's spec with every default filled in; ChildNotFound otherwise. */
  getChildSpec(system: ActorRuntime, supervisor: Ref | string, child: string | Ref, timeoutMs?: number): Promise<ResolvedChildSpec> {
    return ask(system, supervisor, { op: 'getChildSpec', child }, timeoutMs);
  },

  whichChildren(system: ActorRuntime, supervisor: Ref | string, timeoutMs?: number): Promise<ChildEntry[]> {
    return ask(system, supervisor, { op: 'whichChildren' }, timeoutMs);
  },

  countChildren(system: ActorRuntime, supervisor: Ref | string, timeoutMs?: number): Promise<ChildCounts> {
    return ask(system, supervisor, { op: 'countChildren' }, timeoutMs);
  },

  /** Children with their lifecycle states and restart counts, and the remaining intensity. */
  status(system: ActorRuntime, supervisor: Ref | string, timeoutMs?: number): Promise<SupervisorStatus> {
    return ask(system, supervisor, { op: 'status' }, timeoutMs);
  },

  /** Stops the children in reverse order, then the supervisor; resolves with its exit reason. */
  stop(system: ActorRuntime, supervisor: Ref | string, reason: ExitReason = 'shutdown'): Promise<ExitReason> {
    return requestStop(system, supervisor, reason);
  },

  /** A child spec for a nested supervisor (type `supervisor`, shutdown `infinity`); a module answering ignore is OTP's ignore. */
  child<Args>(
    id: string,
    spec: SupervisorSpec | SupervisorModule<Args>,
    options: Omit<ChildSpec, 'id' | 'start' | 'type'> & { readonly args?: Args } = {},
  ): ChildSpec {
    const { args, ...childOptions } = options;
    return {
      id,
      type: 'supervisor',
      ...childOptions,
      start: ({ system, parent }) =>
        typeof (spec as SupervisorModule<Args>).init === 'function'
          ? start(system, spec as SupervisorModule<Args>, { link: parent, args })
          : start(system, spec as SupervisorSpec, { link: parent }),
    };
  },
};

/** One API call; `timeoutMs` is the caller's (Infinity waits as OTP does), default {@link SUPERVISOR_CALL_TIMEOUT_MS}. */
async function ask<T>(system: ActorRuntime, supervisor: Ref | string, request: SupervisorRequest, timeoutMs?: number): Promise<T> {
  const reply = await system.call<SupervisorReply<T>>(supervisor, request, timeoutMs ?? SUPERVISOR_CALL_TIMEOUT_MS);
  if (!reply.ok) throw reply.error;
  return reply.value;
}

