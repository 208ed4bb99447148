/**
 * StateMachine held to OTP's gen_statem_SUITE (and gen_statem's documented timeout rules): each
 * test names the case whose outcome it mirrors.
 */
import { describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { SimulatedClock, type ActorSystem } from '../../src/actors/index.js';
import {
  BehaviourErrorCode,
  effect,
  eventTimeout,
  genericTimeout,
  GENERIC_TIMEOUT,
  nextEvent,
  postpone,
  StartFailed,
  StateMachine,
  stateTimeout,
  StopTimeout,
  updateTimeout,
} from '../../src/behaviours/index.js';
import { testSystem } from '../support/systems.js';

async function advance(system: ActorSystem, clock: SimulatedClock, ms: number): Promise<void> {
  await system.settle();
  clock.advance(ms);
  await system.settle();
}

type Tagged = { type: string; tag?: unknown; name?: unknown };
const fired = (tag: string): Tagged => ({ type: 'fired', tag });

/** A machine that logs every event it handles; `arm` runs `arm`'s actions. */
function logger(handled: unknown[], armActions: unknown[]) {
  return setup({ types: { events: {} as Tagged } }).createMachine({
    initial: 'idle',
    states: {
      idle: {
        on: {
          arm: { actions: armActions as never },
          '*': { actions: ({ event }) => void handled.push(event.tag ?? event.type) },
        },
      },
    },
  });
}

describe('OTP gen_statem_SUITE parity: zero timeouts are inserted, not timed', () => {
  for (const [kind, action] of [
    ['state_timeout', stateTimeout(0, fired('timeout'))],
    ['event_timeout', eventTimeout(0, fired('timeout'))],
    ['generic timeout', genericTimeout('g', 0, fired('timeout'))],
  ] as const) {
    it(`gen_statem_SUITE: event_types — a 0 ms ${kind} is handled before messages already in the mailbox`, async () => {
      const system = testSystem({ clock: new SimulatedClock() });
      const handled: unknown[] = [];
      const ref = await StateMachine.start(system, { machine: logger(handled, [action]) });
      // Both in the mailbox before the machine runs: the timeout set by `arm` still goes first.
      StateMachine.cast(system, ref, { type: 'arm' });
      StateMachine.cast(system, ref, { type: 'm', tag: 'mailbox' });
      await system.settle();
      expect(handled).toEqual(['timeout', 'mailbox']);
      await StateMachine.stop(system, ref);
    });
  }

  it('gen_statem_SUITE: event_order — a 0 ms timeout goes after events already queued; an event timeout is cancelled by them', async () => {
    const system = testSystem({ clock: new SimulatedClock() });
    const handled: unknown[] = [];
    const machine = logger(handled, [
      stateTimeout(0, fired('state0')),
      eventTimeout(0, fired('event0')),
      nextEvent(({ type: 'n', tag: 'inserted' }) as Tagged),
    ]);
    const ref = await StateMachine.start(system, { machine });
    StateMachine.cast(system, ref, { type: 'arm' });
    StateMachine.cast(system, ref, { type: 'm', tag: 'mailbox' });
    await system.settle();
    expect(handled).toEqual(['inserted', 'state0', 'mailbox']);
    await StateMachine.stop(system, ref);
  });
});

describe('OTP gen_statem_SUITE parity: timeouts', () => {
  it('gen_statem_SUITE: timeout_cancel_and_update — update replaces the event, keeps the expiry; with none running it is a zero timeout', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const handled: unknown[] = [];
    const machine = setup({ types: { events: {} as Tagged } }).createMachine({
      initial: 'idle',
      states: {
        idle: {
          on: {
            arm: { actions: stateTimeout(100, fired('old')) },
            update: { actions: updateTimeout('state', fired('new')) },
            updateGeneric: { actions: updateTimeout('generic', fired('from-update'), 'none-running') },
            fired: { actions: ({ event }) => void handled.push(event.tag) },
          },
        },
      },
    });
    const ref = await StateMachine.start(system, { machine });
    StateMachine.cast(system, ref, { type: 'arm' });
    await advance(system, clock, 60);
    StateMachine.cast(system, ref, { type: 'update' });
    await advance(system, clock, 39);
    expect(handled).toEqual([]);
    await advance(system, clock, 1);
    expect(handled).toEqual(['new']);
    StateMachine.cast(system, ref, { type: 'updateGeneric' });
    await system.settle();
    expect(handled).toEqual(['new', 'from-update']);
    await StateMachine.stop(system, ref);
  });

  it('gen_statem_SUITE: generic_timers — timeout names are any value; each name replaces only its namesake', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const handled: unknown[] = [];
    const key = { timer: 1 };
    const machine = setup({ types: { events: {} as Tagged } }).createMachine({
      initial: 'idle',
      states: {
        idle: {
          on: {
            arm: { actions: [genericTimeout(key, 50), genericTimeout(7, 80), genericTimeout(key, 100)] },
            [GENERIC_TIMEOUT]: { actions: ({ event }) => void handled.push(event.name) },
          },
        },
      },
    });
    const ref = await StateMachine.start(system, { machine });
    StateMachine.cast(system, ref, { type: 'arm' });
    await advance(system, clock, 80);
    expect(handled).toEqual([7]);
    await advance(system, clock, 20);
    expect(handled).toEqual([7, key]);
    await StateMachine.stop(system, ref);
  });

  it('gen_statem_SUITE: state_timeout ({abs, true}) — an absolute time on the actor\'s clock', async () => {
    const clock = new SimulatedClock(1_000);
    const system = testSystem({ clock });
    const handled: unknown[] = [];
    const machine = logger(handled, [stateTimeout(1_250, fired('abs'), { absolute: true })]);
    const ref = await StateMachine.start(system, { machine });
    StateMachine.cast(system, ref, { type: 'arm' });
    await advance(system, clock, 249);
    expect(handled).toEqual([]);
    await advance(system, clock, 1);
    expect(handled).toEqual(['abs']);
    await StateMachine.stop(system, ref);
  });

  it('gen_statem_SUITE: state_enter — repeat_state reruns entry; neither it nor keep_state is a state change', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const trace: string[] = [];
    const machine = setup({ types: { events: {} as Tagged } }).createMachine({
      initial: 'a',
      states: {
        a: {
          entry: () => void trace.push('enter a'),
          on: {
            arm: { actions: stateTimeout(100, fired('kept')) },
            later: { actions: postpone() },
            keep: { actions: () => void trace.push('keep') }, // keep_state: targetless
            repeat: { target: 'a', reenter: true }, // repeat_state: re-entered, same state
            fired: { actions: ({ event }) => void trace.push(String(event.tag)) },
            go: 'b',
          },
        },
        b: { on: { later: { actions: () => void trace.push('later retried') } } },
      },
    });
    const ref = await StateMachine.start(system, { machine });
    for (const type of ['arm', 'later', 'keep', 'repeat']) StateMachine.cast(system, ref, { type });
    await advance(system, clock, 100);
    expect(trace).toEqual(['enter a', 'keep', 'enter a', 'kept']);
    expect((await StateMachine.getState(system, ref)).postponed).toBe(1);
    StateMachine.cast(system, ref, { type: 'go' });
    await system.settle();
    expect(trace.at(-1)).toBe('later retried');
    await StateMachine.stop(system, ref);
  });
});

describe('OTP gen_statem_SUITE parity: callbacks and lifecycle', () => {
  it('an async effect holds the next event until it settles, as a GenServer callback does', async () => {
    const system = testSystem();
    const trace: string[] = [];
    let release!: () => void;
    const machine = setup({ types: { events: {} as Tagged } }).createMachine({
      initial: 'idle',
      context: { n: 0 },
      states: {
        idle: {
          on: {
            slow: {
              actions: [
                assign({ n: ({ context }) => context.n + 1 }),
                effect(async () => {
                  trace.push('slow begins');
                  await new Promise<void>((resolve) => (release = resolve));
                  trace.push('slow ends');
                }),
              ],
            },
            fast: { actions: () => void trace.push('fast') },
          },
        },
      },
    });
    const ref = await StateMachine.start(system, { machine });
    StateMachine.cast(system, ref, { type: 'slow' });
    StateMachine.cast(system, ref, { type: 'fast' });
    await system.settle();
    expect(trace).toEqual(['slow begins']);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    await system.settle();
    expect(trace).toEqual(['slow begins', 'slow ends', 'fast']);
    await StateMachine.stop(system, ref);
  });

  it('an async effect that rejects crashes the machine with its reason', async () => {
    const system = testSystem();
    const failure = new Error('effect failed');
    const machine = setup({}).createMachine({
      initial: 'idle',
      states: { idle: { on: { boom: { actions: effect(() => Promise.reject(failure)) } } } },
    });
    const ref = await StateMachine.start(system, { machine });
    const exited = system.exited(ref);
    StateMachine.cast(system, ref, { type: 'boom' } as never);
    expect(await exited).toBe(failure);
  });

  it('gen_statem_SUITE: start (timeout) — {timeout, T}: the start fails with timeout and the machine is gone', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    let release!: () => void;
    const machine = setup({}).createMachine({
      initial: 'idle',
      states: { idle: { entry: effect(() => new Promise<void>((resolve) => (release = resolve))) } },
    });
    const starting = StateMachine.start(system, { machine }, { name: 'slow', timeoutMs: 100 }).catch((e: unknown) => e);
    await advance(system, clock, 100);
    const error = await starting;
    expect(error).toBeInstanceOf(StartFailed);
    expect((error as StartFailed).reason).toBe('timeout');
    expect(system.whereis('slow')).toBeUndefined();
    release();
  });

  it('gen_statem_SUITE: abnormal1 (start) — a failed start rejects only once the machine has exited: its name is free', async () => {
    const system = testSystem();
    const machine = setup({}).createMachine({
      initial: 'idle',
      states: {
        idle: {
          entry: () => {
            throw new Error('init failed');
          },
        },
      },
    });
    const error = await StateMachine.start(system, { machine }, { name: 'taken' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartFailed);
    expect(system.whereis('taken')).toBeUndefined();
    expect(system.actorCount).toBe(0);
  });

  it('gen_statem_SUITE: stop1..stop3 — stop with a timeout; too slow a terminate gives StopTimeout', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    let release!: () => void;
    const machine = setup({}).createMachine({ initial: 'idle', states: { idle: {} } });
    const ref = await StateMachine.start(system, {
      machine,
      terminate: () => new Promise<void>((resolve) => (release = resolve)),
    });
    const stopping = StateMachine.stop(system, ref, 'normal', 10).catch((e: unknown) => e);
    await advance(system, clock, 10);
    const error = await stopping;
    expect(error).toBeInstanceOf(StopTimeout);
    expect((error as StopTimeout).code).toBe(BehaviourErrorCode.StopTimeout);
    release();
    expect(await system.exited(ref)).toBe('normal');
  });
});
