import { StateMachine as XStateMachine, type AnyStateMachine, type EmittedFrom, type SnapshotFrom } from 'xstate';
import type { ActorContext, ExitReason, SpawnOptions } from '../../actors/index.js';
import { InvalidStateMachineDefinition } from '../errors.js';

export const DEFAULT_MAX_POSTPONED = 10_000;
export const DEFAULT_MAX_INSERTED = 10_000;
/** Upper bound of both caps. */
export const MAX_EVENT_QUEUE_CAP = 1_000_000;

/**
 * A state machine behaviour: an xstate machine (made with `setup(...).createMachine(...)`) plus the
 * hooks of the actor that hosts it. One definition serves any number of actors.
 */
export interface StateMachineDefinition<TMachine extends AnyStateMachine = AnyStateMachine> {
  readonly machine: TMachine;
  /** Shown in process info; default `StateMachine(<machine id>)`. */
  readonly name?: string;
  /** Events postponed at most, across states; default {@link DEFAULT_MAX_POSTPONED}. */
  readonly maxPostponed?: number;
  /** Inserted (`nextEvent`) events waiting at most; default {@link DEFAULT_MAX_INSERTED}. */
  readonly maxInserted?: number;
  /**
   * Runs when the actor stops itself (final state, `stop`) or crashes, not when it is killed.
   * `snapshot` is the machine's last snapshot; undefined if the initial transition itself failed.
   */
  readonly terminate?: (
    ctx: ActorContext,
    reason: ExitReason,
    snapshot: SnapshotFrom<TMachine> | undefined,
  ) => void | PromiseLike<void>;
  /** Receives the events the machine emits with xstate's `emit(...)`; without it they are dropped. */
  readonly onEmit?: (ctx: ActorContext, event: EmittedFrom<TMachine>) => void;
  /** Receives xstate's `log(...)` output; default `console.log`. */
  readonly logger?: (...args: unknown[]) => void;
}

export interface StateMachineStartOptions<TInput = unknown> extends Omit<SpawnOptions, 'onStarted' | 'parent'> {
  /** The machine's input (`context: ({ input }) => ...`). */
  readonly input?: TInput;
  /** OTP's start timeout: past it the machine is killed and the start fails with `timeout`. Default: none. */
  readonly timeoutMs?: number;
}

export interface ResolvedDefinition {
  readonly machine: AnyStateMachine;
  readonly name: string;
  readonly maxPostponed: number;
  readonly maxInserted: number;
  readonly terminate: StateMachineDefinition['terminate'];
  readonly onEmit: StateMachineDefinition['onEmit'];
  readonly logger: (...args: unknown[]) => void;
}

/** Validates a definition once, at the boundary; the runner only ever sees the resolved shape. */
export function resolveDefinition<TMachine extends AnyStateMachine>(
  definition: StateMachineDefinition<TMachine>,
): ResolvedDefinition {
  if (definition === null || typeof definition !== 'object') {
    throw new InvalidStateMachineDefinition('definition', 'must be an object');
  }
  const { machine } = definition;
  if (!(machine instanceof XStateMachine)) {
    throw new InvalidStateMachineDefinition('machine', 'must be an xstate machine made with setup(...).createMachine(...)');
  }
  const name = definition.name ?? `StateMachine(${machine.id})`;
  if (typeof name !== 'string' || name.length === 0) throw new InvalidStateMachineDefinition('name', 'must be a non-empty string');
  for (const hook of ['terminate', 'onEmit', 'logger'] as const) {
    if (definition[hook] !== undefined && typeof definition[hook] !== 'function') {
      throw new InvalidStateMachineDefinition(hook, 'must be a function');
    }
  }
  return {
    machine,
    name,
    maxPostponed: checkCap('maxPostponed', definition.maxPostponed ?? DEFAULT_MAX_POSTPONED),
    maxInserted: checkCap('maxInserted', definition.maxInserted ?? DEFAULT_MAX_INSERTED),
    terminate: definition.terminate as ResolvedDefinition['terminate'],
    onEmit: definition.onEmit as ResolvedDefinition['onEmit'],
    logger: definition.logger ?? console.log,
  };
}

function checkCap(option: string, value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > MAX_EVENT_QUEUE_CAP) {
    throw new InvalidStateMachineDefinition(option, `must be an integer in 1..${MAX_EVENT_QUEUE_CAP}, got ${value}`);
  }
  return value;
}

