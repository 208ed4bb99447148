import { describe, expect, it } from 'vitest';
import { assign, createActor, emit, fromPromise, log, setup } from 'xstate';
import { CalleeExited, formatReason, SimulatedClock, type ActorSystem, type ExitReason } from '../../src/actors/index.js';
import {
  BehaviourErrorCode,
  InsertLimitReached,
  InvalidStateMachineDefinition,
  InvalidTimeout,
  NotInStateMachine,
  NotInTransition,
  PostponeLimitReached,
  StartFailed,
  UnsupportedMachineFeature,
} from '../../src/behaviours/errors.js';
import {
  cancelTimeout,
  effect,
  EVENTS_PER_TURN,
  eventTimeout,
  genericTimeout,
  nextEvent,
  postpone,
  reply,
  replyWith,
  StateMachine,
  stateTimeout,
  type CallEvent,
  type EventTimeoutEvent,
  type InfoEvent,
  type MaybeCallEvent,
  type StateTimeoutEvent,
} from '../../src/behaviours/state-machine.js';
import { testSystem } from '../support/systems.js';

// ---- the code lock of OTP's gen_statem guide, as an xstate machine --------------------------------

type LockEvent =
  | { type: 'button'; digit: number }
  | { type: 'code'; digits: number[] }
  | MaybeCallEvent<{ type: 'status' }, string>
  | CallEvent<{ type: 'walk_through' }, string>
  | CallEvent<{ type: 'when_open' }, number>
  | { type: 'lock' }
  | { type: 'hold' }
  | { type: 'boom' }
  | { type: 'decommission' }
  | StateTimeoutEvent
  | EventTimeoutEvent;

interface LockContext {
  readonly code: readonly number[];
  readonly buttons: readonly number[];
  readonly opened: number;
  readonly waiting: readonly CallEvent<{ type: 'when_open' }, number>['from'][];
}

const AUTO_LOCK_MS = 10_000;
const BUTTON_RESET_MS = 5_000;

function codeLock(trace: string[] = []) {
  return setup({
    types: { context: {} as LockContext, events: {} as LockEvent, input: {} as { code: number[] } },
    guards: {
      completesCode: ({ context, event }) =>
        event.type === 'button' && [...context.buttons, event.digit].slice(-context.code.length).join() === context.code.join(),
    },
  }).createMachine({
    id: 'codeLock',
    context: ({ input }) => ({ code: input.code, buttons: [], opened: 0, waiting: [] }),
    initial: 'locked',
    states: {
      locked: {
        entry: [assign({ buttons: [] }), effect(({ ctx }) => trace.push(`enter locked ${ctx.self}`))],
        on: {
          button: [
            { guard: 'completesCode', target: 'open' },
            {
              actions: [
                assign({ buttons: ({ context, event }) => [...context.buttons, event.digit].slice(-context.code.length) }),
                eventTimeout(BUTTON_RESET_MS),
              ],
            },
          ],
          event_timeout: { actions: [assign({ buttons: [] }), () => trace.push('buttons reset')] },
          state_timeout: { actions: () => trace.push('stray state_timeout') },
          code: { actions: effect((actor, { event }) => event.digits.forEach((digit) => actor.nextEvent({ type: 'button', digit }))) },
          status: { actions: replyWith('locked') },
          walk_through: { actions: [() => trace.push('postponed walk_through'), postpone()] },
          when_open: { actions: assign({ waiting: ({ context, event }) => [...context.waiting, event.from] }) },
          boom: {
            actions: () => {
              throw new Error('boom');
            },
          },
          decommission: 'decommissioned',
        },
      },
      open: {
        entry: [
          assign({ opened: ({ context }) => context.opened + 1 }),
          stateTimeout(AUTO_LOCK_MS),
          ({ context }) => context.waiting.forEach((from) => reply(from, context.opened)),
          assign({ waiting: [] }),
          () => trace.push('enter open'),
        ],
        on: {
          state_timeout: 'locked',
          lock: 'locked',
          hold: { actions: stateTimeout(AUTO_LOCK_MS) },
          status: { actions: replyWith(({ context }) => `open #${context.opened}`) },
          walk_through: { actions: replyWith('walked through') },
        },
      },
      decommissioned: { type: 'final' },
    },
  });
}

async function startLock(system: ActorSystem, options: { trace?: string[]; maxPostponed?: number; maxInserted?: number } = {}) {
  const definition = {
    machine: codeLock(options.trace),
    maxPostponed: options.maxPostponed,
    maxInserted: options.maxInserted,
  };
  return StateMachine.start(system, definition, { input: { code: [1, 2, 3] } });
}

function press(system: ActorSystem, ref: Parameters<ActorSystem['send']>[0], digits: number[]): void {
  for (const digit of digits) StateMachine.cast(system, ref, { type: 'button', digit });
}

/** Lets the actors handle what is queued, advances simulated time, then handles what the timers sent. */
async function advance(system: ActorSystem, clock: SimulatedClock, ms: number): Promise<void> {
  await system.settle();
  clock.advance(ms);
  await system.settle();
}

describe('StateMachine: the code lock', () => {
  it('starts in the initial state with its enter actions run, the context built from input', async () => {
    const system = testSystem();
    const trace: string[] = [];
    const ref = await startLock(system, { trace });
    expect(trace).toEqual([`enter locked ${ref}`]);
    const state = await StateMachine.getState<ReturnType<typeof codeLock>>(system, ref);
    expect(state).toMatchObject({ value: 'locked', status: 'active', postponed: 0 });
    expect(state.context.code).toEqual([1, 2, 3]);
    expect(system.info(ref)?.behaviour).toBe('StateMachine(codeLock)');
    expect(await StateMachine.stop(system, ref)).toBe('normal');
  });

  it('answers calls with replyWith, and a stored `from` later with reply()', async () => {
    const system = testSystem();
    const ref = await startLock(system);
    expect(await StateMachine.call(system, ref, { type: 'status' })).toBe('locked');
    const whenOpen = StateMachine.call(system, ref, { type: 'when_open' });
    press(system, ref, [1, 2, 3]);
    expect(await whenOpen).toBe(1);
    expect(await StateMachine.call(system, ref, { type: 'status' })).toBe('open #1');
    await StateMachine.stop(system, ref);
  });

  it('handles inserted events (next_event) before any queued message', async () => {
    const system = testSystem();
    const ref = await startLock(system);
    StateMachine.cast(system, ref, { type: 'code', digits: [1, 2, 3] });
    // Queued right behind the code: it must see the door opened by the three inserted buttons.
    expect(await StateMachine.call(system, ref, { type: 'status' })).toBe('open #1');
    await StateMachine.stop(system, ref);
  });

  it('locks again when the state timeout fires', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const trace: string[] = [];
    const ref = await startLock(system, { trace });
    press(system, ref, [1, 2, 3]);
    await system.settle();
    await advance(system, clock, AUTO_LOCK_MS - 1);
    expect((await StateMachine.getState(system, ref)).value).toBe('open');
    // Events that keep the state keep its timeout running.
    expect(await StateMachine.call(system, ref, { type: 'status' })).toBe('open #1');
    await advance(system, clock, 1);
    expect((await StateMachine.getState(system, ref)).value).toBe('locked');
    expect(trace.filter((line) => line.startsWith('enter'))).toHaveLength(3);
    await StateMachine.stop(system, ref);
  });

  it('restarts the state timeout when a transition sets it again', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const ref = await startLock(system);
    press(system, ref, [1, 2, 3]);
    await advance(system, clock, 6_000);
    StateMachine.cast(system, ref, { type: 'hold' });
    await advance(system, clock, 6_000);
    expect((await StateMachine.getState(system, ref)).value).toBe('open');
    await advance(system, clock, 4_000);
    expect((await StateMachine.getState(system, ref)).value).toBe('locked');
    await StateMachine.stop(system, ref);
  });

  it('resets the buttons when the event timeout fires, and any event cancels it', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const trace: string[] = [];
    const ref = await startLock(system, { trace });
    press(system, ref, [9]);
    await advance(system, clock, BUTTON_RESET_MS - 1);
    // getState is a system request, not an event: it does not cancel the event timeout.
    expect((await StateMachine.getState(system, ref)).context).toMatchObject({ buttons: [9] });
    await advance(system, clock, 1);
    expect(trace).toContain('buttons reset');
    expect((await StateMachine.getState(system, ref)).context).toMatchObject({ buttons: [] });

    press(system, ref, [7]);
    await advance(system, clock, 1_000);
    expect(await StateMachine.call(system, ref, { type: 'status' })).toBe('locked'); // any event cancels it
    await advance(system, clock, BUTTON_RESET_MS * 2);
    expect((await StateMachine.getState(system, ref)).context).toMatchObject({ buttons: [7] });
    expect(trace.filter((line) => line === 'buttons reset')).toHaveLength(1);
    expect(system.timerCount).toBe(0);
    await StateMachine.stop(system, ref);
  });

  it('postpones calls while locked and retries them, in order, once the state changes', async () => {
    const system = testSystem();
    const trace: string[] = [];
    const ref = await startLock(system, { trace });
    const replies: string[] = [];
    const first = StateMachine.call(system, ref, { type: 'walk_through' }).then((r) => replies.push(`1 ${r}`));
    const second = StateMachine.call(system, ref, { type: 'walk_through' }).then((r) => replies.push(`2 ${r}`));
    press(system, ref, [5]); // a transition that keeps the state: postponed events stay put
    expect(await StateMachine.getState(system, ref)).toMatchObject({ value: 'locked', postponed: 2 });
    expect(trace.filter((line) => line === 'postponed walk_through')).toHaveLength(2);
    press(system, ref, [1, 2, 3]);
    await Promise.all([first, second]);
    expect(replies).toEqual(['1 walked through', '2 walked through']);
    expect(await StateMachine.getState(system, ref)).toMatchObject({ value: 'open', postponed: 0 });
    await StateMachine.stop(system, ref);
  });

  it('stops with `normal` on a final state; terminate sees the final snapshot; postponed callers fail', async () => {
    const system = testSystem();
    const seen: { reason: ExitReason; status: string | undefined }[] = [];
    const ref = await StateMachine.start(
      system,
      { machine: codeLock(), terminate: (_ctx, reason, snapshot) => void seen.push({ reason, status: snapshot?.status }) },
      { input: { code: [1] } },
    );
    const exited = system.exited(ref);
    const postponed = StateMachine.call(system, ref, { type: 'walk_through' });
    StateMachine.cast(system, ref, { type: 'decommission' });
    expect(await exited).toBe('normal');
    await expect(postponed).rejects.toBeInstanceOf(CalleeExited);
    expect(seen).toEqual([{ reason: 'normal', status: 'done' }]);
  });

  it('exits with the error an action throws, failing the calls still queued', async () => {
    const system = testSystem();
    const reasons: ExitReason[] = [];
    const ref = await StateMachine.start(
      system,
      { machine: codeLock(), terminate: (_ctx, reason) => void reasons.push(reason) },
      { input: { code: [1] } },
    );
    const exited = system.exited(ref);
    StateMachine.cast(system, ref, { type: 'boom' });
    const queued = StateMachine.call(system, ref, { type: 'status' });
    const reason = await exited;
    expect(reason).toBeInstanceOf(Error);
    expect((reason as Error).message).toBe('boom');
    await expect(queued).rejects.toMatchObject({ reason });
    expect(reasons).toEqual([reason]);
  });

  it('crashes with PostponeLimitReached past maxPostponed', async () => {
    const system = testSystem();
    const ref = await startLock(system, { maxPostponed: 2 });
    const exited = system.exited(ref);
    const calls = [1, 2, 3].map(() => StateMachine.call(system, ref, { type: 'walk_through' }).catch((error: unknown) => error));
    const reason = await exited;
    expect(reason).toBeInstanceOf(PostponeLimitReached);
    expect(reason).toMatchObject({ code: BehaviourErrorCode.PostponeLimit, cap: 2, option: 'maxPostponed' });
    expect((reason as Error).message).toContain('maxPostponed = 2');
    for (const result of await Promise.all(calls)) expect(result).toMatchObject({ reason });
  });

  it('crashes with InsertLimitReached past maxInserted', async () => {
    const system = testSystem();
    const ref = await startLock(system, { maxInserted: 3 });
    const exited = system.exited(ref);
    StateMachine.cast(system, ref, { type: 'code', digits: [1, 2, 3, 4] });
    const reason = await exited;
    expect(reason).toBeInstanceOf(InsertLimitReached);
    expect(reason).toMatchObject({ code: 'STATEM_INSERT_LIMIT', cap: 3, option: 'maxInserted' });
    expect((reason as Error).message).toContain('maxInserted = 3');
  });

  it('refuses caps out of range before spawning anything', async () => {
    const system = testSystem();
    const start = (maxPostponed: number) =>
      StateMachine.start(system, { machine: codeLock(), maxPostponed }, { input: { code: [1] } });
    await expect(start(0)).rejects.toBeInstanceOf(InvalidStateMachineDefinition);
    await expect(start(1.5)).rejects.toMatchObject({ code: 'STATEM_INVALID_DEFINITION', option: 'maxPostponed' });
    expect(system.actorCount).toBe(0);
  });
});

// ---- cases after OTP's gen_statem_SUITE --------------------------------------------------------

describe('StateMachine: gen_statem_SUITE cases', () => {
  it('event_order: inserted events, then postponed ones, and an event timeout they cancel', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const handled: number[] = [];
    type E = { type: 'reply'; tag: number } | CallEvent<{ type: 'buffer' }, string> | EventTimeoutEvent;
    const machine = setup({ types: { events: {} as E } }).createMachine({
      initial: 'start',
      states: {
        start: {
          on: {
            reply: { actions: postpone() },
            buffer: {
              target: 'buffer',
              actions: [
                nextEvent({ type: 'reply', tag: 3 }),
                nextEvent({ type: 'reply', tag: 4 }),
                eventTimeout(0, { type: 'reply', tag: 5 }), // cancelled: events are waiting
                replyWith('ok'),
              ],
            },
          },
        },
        buffer: { on: { reply: { actions: ({ event }) => void handled.push(event.tag) } } },
      },
    });
    const ref = await StateMachine.start(system, { machine });
    StateMachine.cast(system, ref, { type: 'reply', tag: 1 });
    StateMachine.cast(system, ref, { type: 'reply', tag: 2 });
    expect(await StateMachine.call(system, ref, { type: 'buffer' })).toBe('ok');
    await advance(system, clock, 1);
    expect(handled).toEqual([3, 4, 1, 2]);
    await StateMachine.stop(system, ref);
  });

  it('state_timeout: cancelled by a state change, kept by a transition to the same state', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const trace: string[] = [];
    const ref = await startLock(system, { trace });
    press(system, ref, [1, 2, 3]);
    await advance(system, clock, 4_000);
    StateMachine.cast(system, ref, { type: 'lock' });
    await system.settle();
    expect(system.info(ref)?.timers).toBe(0);
    await advance(system, clock, AUTO_LOCK_MS);
    expect(trace).not.toContain('stray state_timeout');
    expect((await StateMachine.getState(system, ref)).value).toBe('locked');
    await StateMachine.stop(system, ref);
  });

  it('state_timeout: a change in any region of a parallel machine is a state change; bad delays crash', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const timeouts: string[] = [];
    type E = { type: 'arm' } | { type: 'flip' } | { type: 'bad' } | StateTimeoutEvent;
    const machine = setup({ types: { events: {} as E } }).createMachine({
      type: 'parallel',
      on: { state_timeout: { actions: () => void timeouts.push('fired') }, arm: { actions: stateTimeout(100) } },
      states: {
        light: { initial: 'off', states: { off: { on: { flip: 'on' } }, on: { on: { flip: 'off' } } } },
        fan: { on: { bad: { actions: stateTimeout(-1) } } },
      },
    });
    const ref = await StateMachine.start(system, { machine });
    StateMachine.cast(system, ref, { type: 'arm' });
    StateMachine.cast(system, ref, { type: 'flip' }); // { light: 'on', fan: {} } differs: cancelled
    await advance(system, clock, 100);
    expect(timeouts).toEqual([]);
    StateMachine.cast(system, ref, { type: 'arm' });
    await advance(system, clock, 100);
    expect(timeouts).toEqual(['fired']);
    const exited = system.exited(ref);
    StateMachine.cast(system, ref, { type: 'bad' });
    expect(await exited).toBeInstanceOf(InvalidTimeout);
  });

  it('generic_timers: named timeouts outlive state changes and events; a namesake replaces; cancel stops', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const fired: string[] = [];
    type E = { type: 'go' } | { type: 'again' } | { type: 'drop' } | { type: 'ping' } | { type: 'pong' };
    const machine = setup({ types: { events: {} as E } }).createMachine({
      initial: 'a',
      on: {
        ping: { actions: () => void fired.push('ping') },
        pong: { actions: () => void fired.push('pong') },
        again: { actions: genericTimeout('ping', 300) },
        drop: { actions: cancelTimeout('pong') },
      },
      states: {
        a: { entry: [genericTimeout('ping', 100), genericTimeout('pong', 500)], on: { go: 'b' } },
        b: {},
      },
    });
    const ref = await StateMachine.start(system, { machine });
    StateMachine.cast(system, ref, { type: 'go' }); // a state change does not cancel them
    StateMachine.cast(system, ref, { type: 'again' }); // replaces ping: now due at 300
    await advance(system, clock, 100);
    expect(fired).toEqual([]);
    await advance(system, clock, 200);
    expect(fired).toEqual(['ping']);
    StateMachine.cast(system, ref, { type: 'drop' });
    await advance(system, clock, 1_000);
    expect(fired).toEqual(['ping']);
    expect(system.timerCount).toBe(0);
    await StateMachine.stop(system, ref);
  });

  it('stop: StateMachine.stop runs terminate with the reason; the machine is gone after', async () => {
    const system = testSystem();
    const reasons: ExitReason[] = [];
    const ref = await StateMachine.start(
      system,
      { machine: codeLock(), terminate: (_ctx, reason) => void reasons.push(reason) },
      { input: { code: [1] } },
    );
    expect(await StateMachine.stop(system, ref, 'shutdown')).toBe('shutdown');
    expect(reasons).toEqual(['shutdown']);
    expect(system.isAlive(ref)).toBe(false);
    expect(await StateMachine.stop(system, ref)).toBe('noproc');
  });

  it('start: a failing initial transition and an initially final machine are failed starts', async () => {
    const system = testSystem();
    const crashing = setup({}).createMachine({
      entry: () => {
        throw new Error('no init');
      },
    });
    const failed = await StateMachine.start(system, { machine: crashing }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(StartFailed);
    expect((failed as StartFailed).reason).toMatchObject({ message: 'no init' });

    const done = setup({}).createMachine({ initial: 'end', states: { end: { type: 'final' } } });
    await expect(StateMachine.start(system, { machine: done })).rejects.toMatchObject({ reason: 'normal' });
    expect(system.actorCount).toBe(0);
  });

  it('shutdown: a trapping machine stops with its parent EXIT reason; other EXITs are events', async () => {
    const system = testSystem();
    const reasons: ExitReason[] = [];
    const exits: string[] = [];
    const machine = setup({ types: { events: {} as { type: 'EXIT'; reason: ExitReason } } }).createMachine({
      on: { EXIT: { actions: ({ event }) => void exits.push(formatReason(event.reason)) } },
    });
    const parent = system.spawn(() => {});
    const ref = await StateMachine.start(
      system,
      { machine, terminate: (_ctx, reason) => void reasons.push(reason) },
      { link: parent, trapExit: true },
    );
    const peer = system.spawn({ init: (ctx) => ctx.link(ref), handle: () => {} });
    await system.settle();
    system.exit(peer, new Error('peer crashed'));
    await system.settle();
    expect(exits).toEqual(['Error: peer crashed']);
    const exited = system.exited(ref);
    system.exit(parent, 'shutdown');
    expect(await exited).toBe('shutdown');
    expect(reasons).toEqual(['shutdown']);
  });
});

// ---- xstate features and the host ------------------------------------------------------------

describe('StateMachine: hosting xstate', () => {
  it("runs xstate's `after` on the actor's timers, cancelled when the state is left", async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const machine = setup({ types: { events: {} as { type: 'leave' } } }).createMachine({
      initial: 'waiting',
      states: {
        waiting: { after: { 1_000: 'late' }, on: { leave: 'left' } },
        late: {},
        left: { after: { 500: 'late' } },
      },
    });
    const ref = await StateMachine.start(system, { machine });
    expect(system.info(ref)?.timers).toBe(1);
    StateMachine.cast(system, ref, { type: 'leave' });
    await advance(system, clock, 499);
    expect((await StateMachine.getState(system, ref)).value).toBe('left');
    await advance(system, clock, 1);
    expect((await StateMachine.getState(system, ref)).value).toBe('late');
    expect(system.timerCount).toBe(0);
    await StateMachine.stop(system, ref);
  });

  it('turns messages that are not events into info events, calls included', async () => {
    const system = testSystem();
    const infos: unknown[] = [];
    const machine = setup({ types: { events: {} as InfoEvent } }).createMachine({
      on: { 'molo.info': { actions: [({ event }) => void infos.push(event.message), replyWith('got it')] } },
    });
    const ref = await StateMachine.start(system, { machine });
    system.send(ref, 42);
    expect(await system.call(ref, 'plain request')).toBe('got it');
    expect(infos).toEqual([42, 'plain request']);
    await StateMachine.stop(system, ref);
  });

  it('passes emitted events to onEmit and log output to the logger; self.send queues in the mailbox', async () => {
    const system = testSystem();
    const emitted: unknown[] = [];
    const logged: unknown[] = [];
    type E = { type: 'kick' } | { type: 'echo' } | CallEvent<{ type: 'count' }, number>;
    const types = { events: {} as E, context: {} as { echoes: number }, emitted: {} as { type: 'kicked' } };
    const machine = setup({ types }).createMachine({
      context: { echoes: 0 },
      on: {
        kick: { actions: [emit({ type: 'kicked' }), log('kick'), ({ self }) => self.send({ type: 'echo' })] },
        echo: { actions: assign({ echoes: ({ context }) => context.echoes + 1 }) },
        count: { actions: replyWith(({ context }) => context.echoes) },
      },
    });
    const ref = await StateMachine.start(system, {
      machine,
      onEmit: (_ctx, event) => void emitted.push(event),
      logger: (...args) => void logged.push(args),
    });
    StateMachine.cast(system, ref, { type: 'kick' });
    await system.settle();
    expect(await StateMachine.call(system, ref, { type: 'count' })).toBe(1);
    expect(emitted).toEqual([{ type: 'kicked' }]);
    expect(logged).toEqual([['kick']]);
    await StateMachine.stop(system, ref);
  });

  it('refuses xstate child actors (invoke, spawn) with UnsupportedMachineFeature', async () => {
    const system = testSystem();
    const machine = setup({ actors: { work: fromPromise(async () => 1) } }).createMachine({ invoke: { src: 'work' } });
    const failed = await StateMachine.start(system, { machine }).catch((error: unknown) => error);
    expect((failed as StartFailed).reason).toBeInstanceOf(UnsupportedMachineFeature);
    expect((failed as StartFailed).reason).toMatchObject({ code: 'STATEM_UNSUPPORTED' });

    const spawning = setup({}).createMachine({ context: ({ spawn }) => ({ child: spawn(fromPromise(async () => 1)) }) });
    const refused = await StateMachine.start(system, { machine: spawning }).catch((error: unknown) => error);
    expect((refused as StartFailed).reason).toBeInstanceOf(UnsupportedMachineFeature);
  });

  it('throws NotInStateMachine when its actions run under plain xstate, NotInTransition when misused', async () => {
    const machine = setup({}).createMachine({ entry: stateTimeout(10) });
    const actor = createActor(machine);
    const errors: unknown[] = [];
    actor.subscribe({ error: (error) => void errors.push(error) });
    actor.start();
    expect(errors[0]).toBeInstanceOf(NotInStateMachine);

    const system = testSystem();
    const postponingInit = setup({}).createMachine({ entry: postpone() });
    const failed = await StateMachine.start(system, { machine: postponingInit }).catch((error: unknown) => error);
    expect((failed as StartFailed).reason).toBeInstanceOf(NotInTransition);
  });

  it(`yields to the event loop every ${EVENTS_PER_TURN} inserted events, keeping their order`, async () => {
    const system = testSystem();
    let progress = 0;
    let progressSeenByOther = -1;
    type E = { type: 'count'; left: number } | CallEvent<{ type: 'progress' }, number>;
    const machine = setup({ types: { events: {} as E } }).createMachine({
      on: {
        count: {
          actions: [
            () => void progress++,
            effect((actor, { event }) => {
              if (event.left > 0) actor.nextEvent({ type: 'count', left: event.left - 1 });
            }),
          ],
        },
        progress: { actions: replyWith(() => progress) },
      },
    });
    const ref = await StateMachine.start(system, { machine });
    const other = system.spawn(() => void (progressSeenByOther = progress));
    StateMachine.cast(system, ref, { type: 'count', left: 3 * EVENTS_PER_TURN });
    system.send(other, 'ping');
    expect(await StateMachine.call(system, ref, { type: 'progress' })).toBe(3 * EVENTS_PER_TURN + 1);
    expect(progressSeenByOther).toBeGreaterThan(0);
    expect(progressSeenByOther).toBeLessThan(3 * EVENTS_PER_TURN + 1);
    system.exit(other, 'kill');
    await StateMachine.stop(system, ref);
  });
});

// Compile-time checks of the typed API (never run).
export async function typedApi(system: ActorSystem): Promise<void> {
  const ref = await StateMachine.start(system, { machine: codeLock() }, { input: { code: [1] } });
  const status: string = await StateMachine.call(system, ref, { type: 'status' });
  const opened: number = await StateMachine.call(system, ref, { type: 'when_open' });
  StateMachine.cast(system, ref, { type: 'button', digit: 1 });
  // @ts-expect-error: not an event of the code lock
  StateMachine.cast(system, ref, { type: 'open_sesame' });
  // @ts-expect-error: a button needs its digit
  StateMachine.cast(system, ref, { type: 'button' });
  // @ts-expect-error: status replies a string
  const wrong: number = await StateMachine.call(system, ref, { type: 'status' });
  void [status, opened, wrong];
}
