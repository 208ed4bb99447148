import type { ActorRuntime, ExitReason, MailboxOptions, Ref } from '../actors/index.js';
import { resolveChildSpec, type ChildSpec } from './child-spec.js';
import { InvalidSupervisorSpec, StartFailed } from './errors.js';
import { requestStop } from './stop-request.js';
import {
  DEFAULT_INTENSITY,
  DEFAULT_MAX_CHILDREN,
  DEFAULT_PERIOD_MS,
  MAX_CHILDREN_CAP,
  MAX_INTENSITY,
  type ChildCounts,
  type ChildEntry,
  type SupervisorReply,
  type SupervisorRequest,
  type SupervisorSpec,
  type SupervisorStatus,
} from './supervisor-protocol.js';
import { SupervisorRunner, type SupervisorSettings } from './supervisor-runner.js';

export interface SupervisorStartOptions {
  readonly name?: string;
  /** The parent: linked at spawn; its EXIT stops this supervisor (children first). */
  readonly link?: Ref;
  readonly mailbox?: MailboxOptions;
}

/** Calls to a supervisor may wait on child starts and shutdowns, so they default to OTP's infinity-like long wait. */
const SUPERVISOR_CALL_TIMEOUT_MS = 60_000;

/**
 * OTP's supervisor: starts children in order, restarts them by strategy within an intensity
 * limit, and stops them in reverse order. Every operation goes through the supervisor's mailbox.
 */
export const Supervisor = {
  /** Resolves once every child has started; rejects with StartFailed if one failed (the others are stopped). */
  start(system: ActorRuntime, spec: SupervisorSpec, options: SupervisorStartOptions = {}): Promise<Ref> {
    const settings = resolveSupervisorSpec(spec, options.link);
    return new Promise((resolve, reject) => {
      const ref: Ref = system.spawn(new SupervisorRunner(settings), {
        name: options.name,
        link: options.link,
        mailbox: options.mailbox,
        trapExit: true,
        // A failed start is reported once the supervisor has exited (OTP 26's proc_lib), so its
        // name is free again and nothing of it is left when the caller sees the error.
        onStarted: (error) =>
          error === undefined ? resolve(ref) : void system.exited(ref).then(() => reject(new StartFailed(error))),
      });
    });
  },

  /**
   * Adds and starts a child (`spec`), or for `simple_one_for_one` starts one from the template
   * with `args`. Resolves with its ref (undefined if it answered ignore).
   */
  startChild(system: ActorRuntime, supervisor: Ref | string, specOrArgs?: ChildSpec | readonly unknown[]): Promise<Ref | undefined> {
    const request: SupervisorRequest = Array.isArray(specOrArgs)
      ? { op: 'startChild', spec: undefined, args: specOrArgs }
      : { op: 'startChild', spec: specOrArgs as ChildSpec | undefined, args: [] };
    return ask(system, supervisor, request);
  },

  /** Stops a child: by id, or by ref for `simple_one_for_one` (whose child is then removed). */
  terminateChild(system: ActorRuntime, supervisor: Ref | string, child: string | Ref): Promise<void> {
    return ask(system, supervisor, { op: 'terminateChild', child });
  },

  restartChild(system: ActorRuntime, supervisor: Ref | string, id: string): Promise<Ref | undefined> {
    return ask(system, supervisor, { op: 'restartChild', id });
  },

  deleteChild(system: ActorRuntime, supervisor: Ref | string, id: string): Promise<void> {
    return ask(system, supervisor, { op: 'deleteChild', id });
  },

  whichChildren(system: ActorRuntime, supervisor: Ref | string): Promise<ChildEntry[]> {
    return ask(system, supervisor, { op: 'whichChildren' });
  },

  countChildren(system: ActorRuntime, supervisor: Ref | string): Promise<ChildCounts> {
    return ask(system, supervisor, { op: 'countChildren' });
  },

  /** Children with their lifecycle states and restart counts, and the remaining intensity. */
  status(system: ActorRuntime, supervisor: Ref | string): Promise<SupervisorStatus> {
    return ask(system, supervisor, { op: 'status' });
  },

  /** Stops the children in reverse order, then the supervisor; resolves with its exit reason. */
  stop(system: ActorRuntime, supervisor: Ref | string, reason: ExitReason = 'shutdown'): Promise<ExitReason> {
    return requestStop(system, supervisor, reason);
  },

  /** A child spec for a nested supervisor (type `supervisor`, shutdown `infinity`). */
  child(id: string, spec: SupervisorSpec, options: Omit<ChildSpec, 'id' | 'start' | 'type'> = {}): ChildSpec {
    return {
      id,
      type: 'supervisor',
      ...options,
      start: ({ system, parent }) => Supervisor.start(system, spec, { link: parent }),
    };
  },
};

async function ask<T>(system: ActorRuntime, supervisor: Ref | string, request: SupervisorRequest): Promise<T> {
  const reply = await system.call<SupervisorReply<T>>(supervisor, request, SUPERVISOR_CALL_TIMEOUT_MS);
  if (!reply.ok) throw reply.error;
  return reply.value;
}

function resolveSupervisorSpec(spec: SupervisorSpec, parent: Ref | undefined): SupervisorSettings {
  if (spec === null || typeof spec !== 'object') throw new InvalidSupervisorSpec('spec', 'must be an object with a children list');
  const strategy = spec.strategy ?? 'one_for_one';
  if (!['one_for_one', 'one_for_all', 'rest_for_one', 'simple_one_for_one'].includes(strategy)) {
    throw new InvalidSupervisorSpec('strategy', `unknown strategy ${String(strategy)}`);
  }
  const intensity = spec.intensity ?? DEFAULT_INTENSITY;
  if (!Number.isInteger(intensity) || intensity < 0 || intensity > MAX_INTENSITY) {
    throw new InvalidSupervisorSpec('intensity', `must be an integer in 0..${MAX_INTENSITY}, got ${intensity}`);
  }
  const periodMs = spec.periodMs ?? DEFAULT_PERIOD_MS;
  if (!Number.isFinite(periodMs) || periodMs <= 0) throw new InvalidSupervisorSpec('periodMs', `must be positive, got ${periodMs}`);
  const maxChildren = spec.maxChildren ?? DEFAULT_MAX_CHILDREN;
  if (!Number.isInteger(maxChildren) || maxChildren < 1 || maxChildren > MAX_CHILDREN_CAP) {
    throw new InvalidSupervisorSpec('maxChildren', `must be an integer in 1..${MAX_CHILDREN_CAP}, got ${maxChildren}`);
  }
  // OTP's supervisor requires the list (it may be empty): a missing one is a mistake, not "no children".
  if (!Array.isArray(spec.children)) throw new InvalidSupervisorSpec('children', 'required: a list of child specs ([] for none)');
  const children = spec.children.map(resolveChildSpec);
  if (strategy === 'simple_one_for_one' && children.length !== 1) {
    throw new InvalidSupervisorSpec('children', 'simple_one_for_one takes exactly one child spec (the template)');
  }
  if (children.length > maxChildren) throw new InvalidSupervisorSpec('children', `more than maxChildren (${maxChildren})`);
  const ids = new Set<string>();
  for (const child of children) {
    if (ids.has(child.id)) throw new InvalidSupervisorSpec('children', `duplicate child id '${child.id}'`);
    ids.add(child.id);
  }
  return { strategy, intensity, periodMs, maxChildren, children, parent };
}
