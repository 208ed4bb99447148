import { assign, setup } from 'xstate';
import { compileMachineTable, lookupCandidate, type MachineCandidate, type MachineTable } from '../../behaviours/machine-table.js';
import { IllegalTaskTransition } from './errors.js';

/**
 * The task lifecycle (S7-3). This machine is the single source of truth for which task state
 * changes exist; the queue consults {@link TASK_TABLE}, compiled from it once, for every change,
 * and a test holds the table to the machine for every state, event and guard value.
 *
 * `attempts` counts failed runs (a failure, a hard timeout, a lease that expired without an ack);
 * a run given back at shutdown is not an attempt. While `attempts < maxRetries` a failure is
 * retryable; the failure that reaches `maxRetries` is permanent and ends in the dead-letter queue.
 */
export type TaskState = 'queued' | 'leased' | 'running' | 'succeeded' | 'failed-retryable' | 'failed-permanent' | 'dead-lettered' | 'cancelled';

export type TaskEvent =
  /** A worker took the task; its lease (the ack deadline) starts. */
  | { type: 'LEASE' }
  /** The worker started the handler. */
  | { type: 'START' }
  /** The worker renewed the lease (every 15 s by default). */
  | { type: 'HEARTBEAT' }
  /** The handler settled successfully: the task is acknowledged. */
  | { type: 'SUCCEED' }
  /** The handler failed (threw, or hit its hard timeout): retried while retries are left. */
  | { type: 'FAIL' }
  /** The handler failed in a way no retry will fix (it said so). */
  | { type: 'FAIL_PERMANENT' }
  /** The lease ran out without an ack (the worker died or hung): back to the queue, counted as an attempt. */
  | { type: 'EXPIRE' }
  /** The retry delay elapsed. */
  | { type: 'RETRY' }
  /** Shutdown gave the task back unrun (R7-9): not an attempt. */
  | { type: 'RELEASE' }
  /** Into the dead-letter queue: after a permanent failure, or at shutdown on a queue configured so. */
  | { type: 'DEAD_LETTER' }
  /** Out of the dead-letter queue, back to the queue. */
  | { type: 'REDRIVE' }
  | { type: 'CANCEL' };

export type TaskEventType = TaskEvent['type'];
export type TaskGuard = 'retriesLeft';

export interface TaskLifecycleContext {
  readonly attempts: number;
  readonly maxRetries: number;
}

export const TASK_STATES: readonly TaskState[] = [
  'queued',
  'leased',
  'running',
  'succeeded',
  'failed-retryable',
  'failed-permanent',
  'dead-lettered',
  'cancelled',
];
export const TASK_EVENTS: readonly TaskEventType[] = [
  'LEASE',
  'START',
  'HEARTBEAT',
  'SUCCEED',
  'FAIL',
  'FAIL_PERMANENT',
  'EXPIRE',
  'RETRY',
  'RELEASE',
  'DEAD_LETTER',
  'REDRIVE',
  'CANCEL',
];

/** What may happen to a task a worker holds, leased or running alike. */
const WHILE_TAKEN = {
  // The lease ran out without an ack: back to the queue as an attempt, or permanent once retries are spent.
  EXPIRE: [
    { guard: 'retriesLeft', target: 'queued', actions: 'countAttempt' },
    { target: 'failed-permanent', actions: 'countAttempt' },
  ],
  RELEASE: 'queued',
  DEAD_LETTER: 'dead-lettered',
  CANCEL: 'cancelled',
} as const;

export const taskLifecycle = setup({
  types: {
    context: {} as TaskLifecycleContext,
    events: {} as TaskEvent,
    input: {} as { attempts?: number; maxRetries: number },
  },
  guards: {
    retriesLeft: ({ context }) => context.attempts < context.maxRetries,
  },
  actions: {
    countAttempt: assign({ attempts: ({ context }) => context.attempts + 1 }),
  },
}).createMachine({
  id: 'task',
  initial: 'queued',
  context: ({ input }) => ({ attempts: input.attempts ?? 0, maxRetries: input.maxRetries }),
  states: {
    queued: { on: { LEASE: 'leased', CANCEL: 'cancelled' } },
    leased: { on: { START: 'running', HEARTBEAT: 'leased', ...WHILE_TAKEN } },
    running: {
      on: {
        HEARTBEAT: 'running',
        SUCCEED: 'succeeded',
        FAIL: [
          { guard: 'retriesLeft', target: 'failed-retryable', actions: 'countAttempt' },
          { target: 'failed-permanent', actions: 'countAttempt' },
        ],
        FAIL_PERMANENT: { target: 'failed-permanent', actions: 'countAttempt' },
        ...WHILE_TAKEN,
      },
    },
    'failed-retryable': { on: { RETRY: 'queued', CANCEL: 'cancelled' } },
    'failed-permanent': { on: { DEAD_LETTER: 'dead-lettered' } },
    'dead-lettered': { on: { REDRIVE: 'queued' } },
    // Terminal, but not xstate `final`: a final state stops the actor, and the queue, not xstate, decides when a task's record goes.
    succeeded: {},
    cancelled: {},
  },
});

export type TaskCandidate = MachineCandidate<TaskState, TaskGuard>;
export type TaskTable = MachineTable<TaskState, TaskEventType, TaskGuard>;

/** The task lifecycle as a lookup table, compiled once from {@link taskLifecycle}. */
export const TASK_TABLE: TaskTable = compileMachineTable<TaskState, TaskEventType, TaskGuard>(taskLifecycle, TASK_STATES);

/** States no event leaves: the task is done with. */
export const TERMINAL_TASK_STATES: readonly TaskState[] = TASK_STATES.filter((state) => Object.keys(TASK_TABLE[state]).length === 0);

/** A task state change: where the event leads, and whether it counts as an attempt (the machine's `countAttempt`). */
export interface TaskStep {
  readonly state: TaskState;
  readonly countsAttempt: boolean;
}

/**
 * The step `event` takes from `state`; `retriesLeft` answers the only guard (whether the task's
 * attempts are still below its max_retries). Throws IllegalTaskTransition when the machine has no
 * such transition.
 */
export function nextTaskStep(state: TaskState, event: TaskEventType, retriesLeft: boolean): TaskStep {
  const candidate = lookupCandidate(TASK_TABLE, state, event, () => retriesLeft);
  if (candidate === undefined) throw new IllegalTaskTransition(state, event);
  return { state: candidate.target, countsAttempt: candidate.actions.includes('countAttempt') };
}

/** The next state only (see {@link nextTaskStep}). */
export function nextTaskState(state: TaskState, event: TaskEventType, retriesLeft: boolean): TaskState {
  return nextTaskStep(state, event, retriesLeft).state;
}
