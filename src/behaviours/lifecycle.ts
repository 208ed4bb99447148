import { assign, setup, type AnyStateMachine } from 'xstate';
import { IllegalTransition } from './errors.js';
import { addRestart } from './intensity.js';
import { compileMachineTable, lookupTransition, type MachineCandidate, type MachineTable } from './machine-table.js';

/**
 * The child lifecycle. This machine is the single source of truth for which transitions exist;
 * supervisors do not interpret it per transition (about 10 µs each) but consult the table that
 * {@link compileLifecycle} derives from it once. A test holds the table to the machine.
 */
export type LifecycleState = 'stopped' | 'starting' | 'running' | 'backoff' | 'stopping' | 'exited' | 'fatal';

export type LifecycleEvent =
  | { type: 'START' }
  | { type: 'STARTED' }
  /** The start function returned no child (OTP's `ignore`). */
  | { type: 'IGNORED' }
  | { type: 'START_FAILED'; now: number }
  /** A start asked for by hand (restartChild) failed: OTP leaves the child stopped, uncounted. */
  | { type: 'START_REFUSED' }
  | { type: 'EXITED' }
  | { type: 'RESTART'; now: number }
  /** The exit does not call for a restart (temporary, or transient with a clean exit). */
  | { type: 'DISCARD' }
  | { type: 'STOP' }
  | { type: 'STOPPED' }
  | { type: 'RETRY' };

export type LifecycleEventType = LifecycleEvent['type'];
export type LifecycleGuard = 'withinIntensity';

export interface LifecycleContext {
  readonly restarts: readonly number[];
  readonly intensity: number;
  readonly periodMs: number;
}

export const LIFECYCLE_STATES: readonly LifecycleState[] = ['stopped', 'starting', 'running', 'backoff', 'stopping', 'exited', 'fatal'];
export const LIFECYCLE_EVENTS: readonly LifecycleEventType[] = [
  'START',
  'STARTED',
  'IGNORED',
  'START_FAILED',
  'START_REFUSED',
  'EXITED',
  'RESTART',
  'DISCARD',
  'STOP',
  'STOPPED',
  'RETRY',
];

const attemptWithinIntensity = (context: LifecycleContext, event: LifecycleEvent): boolean =>
  'now' in event && !addRestart(context.restarts, event.now, context.intensity, context.periodMs).exceeded;

/** A failed start and a restart are the same counted attempt: to `backoff` within the intensity, else `fatal`. */
const countedAttempt = [
  { guard: 'withinIntensity', target: 'backoff', actions: 'recordAttempt' },
  { target: 'fatal', actions: 'recordAttempt' },
] as const;

export const childLifecycle = setup({
  types: {
    context: {} as LifecycleContext,
    events: {} as LifecycleEvent,
    input: {} as { intensity: number; periodMs: number },
  },
  guards: {
    // Each restart and each failed start attempt counts against the intensity (OTP).
    withinIntensity: ({ context, event }) => attemptWithinIntensity(context, event),
  },
  actions: {
    // Every counted attempt enters the window, so the machine alone gives up when OTP would.
    recordAttempt: assign({
      restarts: ({ context, event }) =>
        'now' in event ? addRestart(context.restarts, event.now, context.intensity, context.periodMs).restarts : context.restarts,
    }),
  },
}).createMachine({
  id: 'child',
  initial: 'stopped',
  context: ({ input }) => ({ restarts: [], intensity: input.intensity, periodMs: input.periodMs }),
  states: {
    stopped: { on: { START: 'starting' } },
    starting: {
      on: {
        STARTED: 'running',
        IGNORED: 'stopped',
        START_FAILED: countedAttempt,
        START_REFUSED: 'stopped',
        STOP: 'stopping',
      },
    },
    running: { on: { EXITED: 'exited', STOP: 'stopping' } },
    stopping: { on: { STOPPED: 'stopped', EXITED: 'stopped' } },
    exited: {
      on: {
        RESTART: countedAttempt,
        DISCARD: 'stopped',
        STOP: 'stopped',
      },
    },
    backoff: { on: { RETRY: 'starting', STOP: 'stopped' } },
    fatal: { on: { START: 'starting' } },
  },
});

/** One possible outcome of an event in a state: taken if its guard (if any) holds. */
export type LifecycleCandidate = MachineCandidate<LifecycleState, LifecycleGuard>;

export type LifecycleTable = MachineTable<LifecycleState, LifecycleEventType, LifecycleGuard>;

/** Reads the machine's own transition definitions into a lookup table (the generic compiler, for these states). */
export function compileLifecycle(machine: AnyStateMachine = childLifecycle): LifecycleTable {
  return compileMachineTable<LifecycleState, LifecycleEventType, LifecycleGuard>(machine, LIFECYCLE_STATES);
}

export const LIFECYCLE_TABLE: LifecycleTable = compileLifecycle();

/**
 * The next state for `event` in `state`, evaluating guards with `guard`; throws IllegalTransition
 * when the machine has no such transition.
 */
export function nextLifecycleState(
  state: LifecycleState,
  event: LifecycleEventType,
  guard: (name: LifecycleGuard) => boolean = alwaysTrue,
): LifecycleState {
  const next = lookupTransition(LIFECYCLE_TABLE, state, event, guard);
  if (next === undefined) throw new IllegalTransition(state, event);
  return next;
}

const alwaysTrue = (): boolean => true;
