import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, transition, type SnapshotFrom } from 'xstate';
import {
  IllegalTransition,
  LIFECYCLE_EVENTS,
  LIFECYCLE_STATES,
  LIFECYCLE_TABLE,
  childLifecycle,
  compileLifecycle,
  nextLifecycleState,
  type LifecycleEvent,
  type LifecycleEventType,
  type LifecycleGuard,
  type LifecycleState,
} from '../../src/behaviours/index.js';

/**
 * The compiled table must say exactly what the xstate machine says, for every state, every event
 * and every valuation of the guard: the table is what the supervisor consults, the machine is the
 * source of truth.
 */

type Outcome = LifecycleState | 'illegal';
type Snapshot = SnapshotFrom<typeof childLifecycle>;

const context = { restarts: [] as number[], intensity: 1, periodMs: 5_000 };

/** The machine with its only guard pinned to `within` (snapshots remember the machine that made them). */
const machineWith = (within: boolean) => childLifecycle.provide({ guards: { withinIntensity: () => within } });

/** One machine whose guard reads a switch, so snapshots reached along a path can be asked either way. */
let guardSwitch = true;
const switchable = childLifecycle.provide({ guards: { withinIntensity: () => guardSwitch } });

/** A full event object for a type (counted events carry the time). */
function eventOf(type: LifecycleEventType, now = 0): LifecycleEvent {
  return type === 'START_FAILED' || type === 'RESTART' ? { type, now } : ({ type } as LifecycleEvent);
}

/** What xstate does with `type` in `snapshot`: the next state, or 'illegal' when no transition is enabled. */
function machineOutcome(machine: typeof switchable, snapshot: Snapshot, type: LifecycleEventType): Outcome {
  const event = eventOf(type);
  const [next] = transition(machine, snapshot, event);
  const enabled = snapshot.can(event);
  // An unhandled event leaves xstate's snapshot untouched; `can` must agree with that.
  expect(next === snapshot, `can() and transition() disagree for ${String(snapshot.value)} × ${type}`).toBe(!enabled);
  return enabled ? (next.value as LifecycleState) : 'illegal';
}

/** What the compiled table does, with the guard pinned to `within`. */
function tableOutcome(state: LifecycleState, type: LifecycleEventType, within: boolean): Outcome {
  try {
    return nextLifecycleState(state, type, () => within);
  } catch (error) {
    expect(error).toBeInstanceOf(IllegalTransition);
    expect((error as IllegalTransition).code).toBe('LIFECYCLE_ILLEGAL_TRANSITION');
    expect((error as IllegalTransition).state).toBe(state);
    expect((error as IllegalTransition).event).toBe(type);
    return 'illegal';
  }
}

/** Every snapshot reachable from the initial one by real transitions, under either guard value. */
function reachableSnapshots(): Map<LifecycleState, { snapshot: Snapshot; path: string[] }> {
  const found = new Map<LifecycleState, { snapshot: Snapshot; path: string[] }>();
  const initial = createActor(switchable, { input: { intensity: 1, periodMs: 5_000 } }).getSnapshot();
  const queue: { snapshot: Snapshot; path: string[] }[] = [{ snapshot: initial, path: [] }];
  found.set(initial.value as LifecycleState, queue[0]!);
  while (queue.length > 0) {
    const { snapshot, path } = queue.shift()!;
    for (const within of [true, false]) {
      guardSwitch = within;
      for (const type of LIFECYCLE_EVENTS) {
        const [next] = transition(switchable, snapshot, eventOf(type));
        const value = next.value as LifecycleState;
        if (next === snapshot || found.has(value)) continue;
        const entry = { snapshot: next, path: [...path, `${type}${within ? '' : '(!withinIntensity)'}`] };
        found.set(value, entry);
        queue.push(entry);
      }
    }
  }
  return found;
}

describe('lifecycle table vs xstate machine', () => {
  it('covers exactly the machine’s states and events', () => {
    expect(new Set(Object.keys(childLifecycle.root.states))).toEqual(new Set(LIFECYCLE_STATES));
    expect(new Set(childLifecycle.events)).toEqual(new Set(LIFECYCLE_EVENTS));
    expect(new Set(Object.keys(LIFECYCLE_TABLE))).toEqual(new Set(LIFECYCLE_STATES));
    // The exported table is the one compiled from the machine, not a hand-written copy.
    expect(LIFECYCLE_TABLE).toEqual(compileLifecycle(childLifecycle));
    // Only the guard the supervisor knows how to evaluate appears in the table.
    const guards = new Set<string | undefined>();
    for (const state of LIFECYCLE_STATES) {
      for (const candidates of Object.values(LIFECYCLE_TABLE[state])) for (const c of candidates ?? []) guards.add(c.guard);
    }
    expect([...guards].filter((g) => g !== undefined)).toEqual(['withinIntensity']);
  });

  it('every state is reachable from the initial state', () => {
    const reachable = reachableSnapshots();
    expect(new Set(reachable.keys())).toEqual(new Set(LIFECYCLE_STATES));
  });

  // Every state × every event × every guard valuation, on snapshots resolved directly from a state value.
  const cases: [LifecycleState, LifecycleEventType, boolean][] = [];
  for (const state of LIFECYCLE_STATES) {
    for (const type of LIFECYCLE_EVENTS) for (const within of [true, false]) cases.push([state, type, within]);
  }
  it.each(cases)('%s × %s (withinIntensity = %s)', (state, type, within) => {
    const machine = machineWith(within);
    const snapshot = machine.resolveState({ value: state, context });
    expect(snapshot.value).toBe(state);
    expect(tableOutcome(state, type, within)).toBe(machineOutcome(machine, snapshot, type));
  });

  it('agrees on snapshots reached by real paths from the initial state, too', () => {
    const reachable = reachableSnapshots();
    for (const [state, { snapshot, path }] of reachable) {
      for (const within of [true, false]) {
        guardSwitch = within;
        for (const type of LIFECYCLE_EVENTS) {
          expect(tableOutcome(state, type, within), `after ${path.join(' → ') || '(initial)'}: ${type}, guard ${within}`).toBe(
            machineOutcome(switchable, snapshot, type),
          );
        }
      }
    }
  });

  it('consults the guard only for guarded transitions, and only by name', () => {
    for (const state of LIFECYCLE_STATES) {
      for (const type of LIFECYCLE_EVENTS) {
        const asked: LifecycleGuard[] = [];
        try {
          nextLifecycleState(state, type, (name) => {
            asked.push(name);
            return true;
          });
        } catch (error) {
          expect(error).toBeInstanceOf(IllegalTransition);
        }
        const guarded = (LIFECYCLE_TABLE[state][type] ?? []).some((candidate) => candidate.guard !== undefined);
        expect(asked).toEqual(guarded ? ['withinIntensity'] : []);
      }
    }
  });

  it("the machine's own guard counts the attempt against the intensity (exceeded only at intensity 0 with no history)", () => {
    for (const intensity of [0, 1, 3]) {
      const snapshot = childLifecycle.resolveState({ value: 'exited', context: { restarts: [], intensity, periodMs: 1_000 } });
      const [next] = transition(childLifecycle, snapshot, { type: 'RESTART', now: 10 });
      expect(next.value).toBe(intensity === 0 ? 'fatal' : 'backoff');
    }
    const full = childLifecycle.resolveState({ value: 'starting', context: { restarts: [0, 500], intensity: 2, periodMs: 1_000 } });
    expect(transition(childLifecycle, full, { type: 'START_FAILED', now: 1_000 })[0].value).toBe('fatal');
    expect(transition(childLifecycle, full, { type: 'START_FAILED', now: 1_001 })[0].value).toBe('backoff');
  });
});

describe('lifecycle machine model test (xstate actor and table in lockstep)', () => {
  const step = fc.record({ type: fc.constantFrom(...LIFECYCLE_EVENTS), within: fc.boolean() });

  it('random event sequences leave the actor and the table in the same state', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        // The guard reads whatever the current step says, for the actor and the table alike.
        let within = true;
        const machine = childLifecycle.provide({ guards: { withinIntensity: () => within } });
        const actor = createActor(machine, { input: { intensity: 1, periodMs: 5_000 } });
        actor.start();
        let state: LifecycleState = 'stopped';
        try {
          expect(actor.getSnapshot().value).toBe(state);
          for (const { type, within: guardValue } of steps) {
            within = guardValue;
            const before = actor.getSnapshot();
            const enabled = before.can(eventOf(type));
            let tableNext: LifecycleState | undefined;
            try {
              tableNext = nextLifecycleState(state, type, () => within);
            } catch (error) {
              if (!(error instanceof IllegalTransition)) throw error;
            }
            actor.send(eventOf(type));
            const after = actor.getSnapshot();
            if (tableNext === undefined) {
              // Illegal in the table: xstate must ignore the event.
              expect(enabled).toBe(false);
              expect(after).toBe(before);
            } else {
              expect(enabled).toBe(true);
              state = tableNext;
            }
            expect(after.value).toBe(state);
            expect(after.status).toBe('active');
          }
        } finally {
          actor.stop();
        }
      }),
      { seed: 42, numRuns: 500 },
    );
  });
});

describe('the machine alone keeps the restart window', () => {
  it('gives up on the attempt that exceeds the intensity, and ages attempts out', () => {
    const actor = createActor(childLifecycle, { input: { intensity: 2, periodMs: 1_000 } }).start();
    const crashAndRestart = (now: number): string => {
      actor.send({ type: 'RETRY' });
      actor.send({ type: 'STARTED' });
      actor.send({ type: 'EXITED' });
      actor.send({ type: 'RESTART', now });
      return String(actor.getSnapshot().value);
    };
    actor.send({ type: 'START' });
    actor.send({ type: 'STARTED' });
    actor.send({ type: 'EXITED' });
    actor.send({ type: 'RESTART', now: 0 });
    expect(actor.getSnapshot().value).toBe('backoff');
    expect(crashAndRestart(500)).toBe('backoff');
    expect(actor.getSnapshot().context.restarts).toEqual([0, 500]);
    // At 1,500 the restart at 0 has aged out (500 is exactly one period old and still counts).
    expect(crashAndRestart(1_500)).toBe('backoff');
    expect(actor.getSnapshot().context.restarts).toEqual([500, 1_500]);
    expect(crashAndRestart(1_600)).toBe('backoff');
    expect(crashAndRestart(1_700)).toBe('fatal');
    actor.stop();
  });
});
