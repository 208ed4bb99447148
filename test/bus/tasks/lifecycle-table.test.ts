import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, transition } from 'xstate';
import { compileMachineTable } from '../../../src/behaviours/machine-table.js';
import {
  IllegalTaskTransition,
  TASK_EVENTS,
  TASK_STATES,
  TASK_TABLE,
  TERMINAL_TASK_STATES,
  nextTaskStep,
  taskLifecycle,
  type TaskEventType,
  type TaskState,
} from '../../../src/bus/index.js';

/**
 * The compiled task table must say exactly what the xstate machine says, for every state, every
 * event and both values of the `retriesLeft` guard, including whether the step counts an attempt.
 */

type Outcome = { state: TaskState; attempts: number } | 'illegal';

/** What xstate does with `type` in `state` with `attempts` of `maxRetries` used. */
function machineOutcome(state: TaskState, type: TaskEventType, attempts: number, maxRetries: number): Outcome {
  const snapshot = taskLifecycle.resolveState({ value: state, context: { attempts, maxRetries } });
  expect(snapshot.value).toBe(state);
  const enabled = snapshot.can({ type });
  const [next] = transition(taskLifecycle, snapshot, { type });
  // An unhandled event leaves the snapshot untouched (a self-transition, HEARTBEAT, may too).
  if (!enabled) expect(next, `can() and transition() disagree for ${state} × ${type}`).toBe(snapshot);
  return enabled ? { state: next.value as TaskState, attempts: next.context.attempts } : 'illegal';
}

function tableOutcome(state: TaskState, type: TaskEventType, attempts: number, maxRetries: number): Outcome {
  try {
    const step = nextTaskStep(state, type, attempts < maxRetries);
    return { state: step.state, attempts: attempts + (step.countsAttempt ? 1 : 0) };
  } catch (error) {
    expect(error).toBeInstanceOf(IllegalTaskTransition);
    expect((error as IllegalTaskTransition).code).toBe('TASK_ILLEGAL_TRANSITION');
    expect((error as IllegalTaskTransition).state).toBe(state);
    expect((error as IllegalTaskTransition).event).toBe(type);
    return 'illegal';
  }
}

describe('task lifecycle table vs xstate machine', () => {
  it('covers exactly the S7-3 states and the machine’s events, compiled from the machine', () => {
    expect(new Set(Object.keys(taskLifecycle.root.states))).toEqual(new Set(TASK_STATES));
    expect(TASK_STATES).toEqual(['queued', 'leased', 'running', 'succeeded', 'failed-retryable', 'failed-permanent', 'dead-lettered', 'cancelled']);
    expect(new Set(taskLifecycle.events)).toEqual(new Set(TASK_EVENTS));
    expect(TASK_TABLE).toEqual(compileMachineTable(taskLifecycle, TASK_STATES));
    expect([...TERMINAL_TASK_STATES].sort()).toEqual(['cancelled', 'succeeded']);
  });

  it('the compiler refuses a state list that disagrees with the machine', () => {
    expect(() => compileMachineTable(taskLifecycle, TASK_STATES.slice(1))).toThrow(/does not list/);
    expect(() => compileMachineTable(taskLifecycle, [...TASK_STATES, 'parked' as TaskState])).toThrow(/lacks state parked/);
  });

  // Every state × every event × guard true (attempts 0 of 2) and false (attempts 2 of 2).
  const cases: [TaskState, TaskEventType, number][] = [];
  for (const state of TASK_STATES) for (const type of TASK_EVENTS) for (const attempts of [0, 2]) cases.push([state, type, attempts]);
  it.each(cases)('%s × %s (attempts %i of 2)', (state, type, attempts) => {
    expect(tableOutcome(state, type, attempts, 2)).toEqual(machineOutcome(state, type, attempts, 2));
  });

  it('every state is reachable from queued', () => {
    const seen = new Set<TaskState>(['queued']);
    const queue: TaskState[] = ['queued'];
    while (queue.length > 0) {
      const state = queue.shift()!;
      for (const type of TASK_EVENTS) {
        for (const retriesLeft of [true, false]) {
          try {
            const next = nextTaskStep(state, type, retriesLeft).state;
            if (!seen.has(next)) {
              seen.add(next);
              queue.push(next);
            }
          } catch {
            // Not enabled here.
          }
        }
      }
    }
    expect(seen).toEqual(new Set(TASK_STATES));
  });

  it('a task failing until max_retries is spent ends dead-lettered with attempts = max_retries + 1', () => {
    const actor = createActor(taskLifecycle, { input: { maxRetries: 2 } }).start();
    for (let run = 0; run < 3; run++) {
      actor.send({ type: 'LEASE' });
      actor.send({ type: 'START' });
      actor.send({ type: 'FAIL' });
      if (run < 2) {
        expect(actor.getSnapshot().value).toBe('failed-retryable');
        actor.send({ type: 'RETRY' });
      }
    }
    expect(actor.getSnapshot().value).toBe('failed-permanent');
    actor.send({ type: 'DEAD_LETTER' });
    expect(actor.getSnapshot().value).toBe('dead-lettered');
    expect(actor.getSnapshot().context.attempts).toBe(3);
    actor.stop();
  });
});

describe('task lifecycle model test (xstate actor and table in lockstep)', () => {
  it('random event sequences leave the actor and the table in the same state and attempt count', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4 }), fc.array(fc.constantFrom(...TASK_EVENTS), { maxLength: 80 }), (maxRetries, events) => {
        const actor = createActor(taskLifecycle, { input: { maxRetries } }).start();
        let state: TaskState = 'queued';
        let attempts = 0;
        try {
          for (const type of events) {
            const before = actor.getSnapshot();
            let step: ReturnType<typeof nextTaskStep> | undefined;
            try {
              step = nextTaskStep(state, type, attempts < maxRetries);
            } catch (error) {
              if (!(error instanceof IllegalTaskTransition)) throw error;
            }
            expect(before.can({ type })).toBe(step !== undefined);
            actor.send({ type });
            if (step === undefined) {
              expect(actor.getSnapshot()).toBe(before);
            } else {
              state = step.state;
              if (step.countsAttempt) attempts++;
            }
            expect(actor.getSnapshot().value).toBe(state);
            expect(actor.getSnapshot().context.attempts).toBe(attempts);
            expect(actor.getSnapshot().status).toBe('active');
          }
        } finally {
          actor.stop();
        }
      }),
      { seed: 13, numRuns: 500 },
    );
  });
});
