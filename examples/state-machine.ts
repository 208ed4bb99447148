/**
 * A StateMachine: the code lock of OTP's gen_statem guide, as an xstate machine run by an actor.
 * Shows enter actions, inserted events, postponed calls, a state timeout (auto-lock), an event
 * timeout (button reset) and a final state that stops the actor.
 * Run: npm run example examples/state-machine.ts
 */
import { assign, setup } from 'xstate';
import { ActorSystem } from 'molo/actors';
import {
  effect,
  eventTimeout,
  postpone,
  replyWith,
  StateMachine,
  stateTimeout,
  type CallEvent,
  type EventTimeoutEvent,
  type StateTimeoutEvent,
} from 'molo/behaviours';

type LockEvent =
  | { type: 'button'; digit: number }
  | { type: 'code'; digits: number[] }
  | CallEvent<{ type: 'status' }, string>
  | CallEvent<{ type: 'walk_through' }, string>
  | { type: 'decommission' }
  | StateTimeoutEvent
  | EventTimeoutEvent;

const codeLock = setup({
  types: {
    context: {} as { code: readonly number[]; buttons: readonly number[] },
    events: {} as LockEvent,
    input: {} as { code: number[] },
  },
  guards: {
    completesCode: ({ context, event }) =>
      event.type === 'button' && [...context.buttons, event.digit].slice(-context.code.length).join() === context.code.join(),
  },
}).createMachine({
  id: 'codeLock',
  context: ({ input }) => ({ code: input.code, buttons: [] }),
  initial: 'locked',
  states: {
    locked: {
      // Enter actions; `effect` gives the actor context (self, send, spawnLink, ...).
      entry: [assign({ buttons: [] }), effect(({ ctx }) => console.log(`${ctx.system.info(ctx.self)?.name}: locked`))],
      on: {
        button: [
          { guard: 'completesCode', target: 'open' },
          // Forget a half-typed code after 50 ms without any event.
          { actions: [assign({ buttons: ({ context, event }) => [...context.buttons, event.digit] }), eventTimeout(50)] },
        ],
        event_timeout: { actions: [assign({ buttons: [] }), () => console.log('buttons reset by the event timeout')] },
        // One event that inserts others, handled before anything already queued.
        code: { actions: effect((actor, { event }) => event.digits.forEach((digit) => actor.nextEvent({ type: 'button', digit }))) },
        walk_through: { actions: postpone() },
        status: { actions: replyWith('locked') },
        decommission: 'retired',
      },
    },
    open: {
      // Lock again after 100 ms unless the state changes first.
      entry: [stateTimeout(100), effect(({ ctx }) => console.log(`${ctx.system.info(ctx.self)?.name}: open`))],
      on: {
        state_timeout: 'locked',
        walk_through: { actions: replyWith('walked through') },
        status: { actions: replyWith('open') },
      },
    },
    retired: { type: 'final' },
  },
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const system = new ActorSystem({ node: 'example' });
const lock = await StateMachine.start(
  system,
  { machine: codeLock, terminate: (_ctx, reason) => console.log(`terminate: ${String(reason)}`) },
  { name: 'front-door', input: { code: [4, 2] } },
);

console.log('status:', await StateMachine.call(system, lock, { type: 'status' }));
const visitor = StateMachine.call(system, lock, { type: 'walk_through' });
console.log('postponed events:', (await StateMachine.getState(system, lock)).postponed);
StateMachine.cast(system, lock, { type: 'code', digits: [4, 2] });
console.log('visitor:', await visitor);
console.log('status:', await StateMachine.call(system, 'front-door', { type: 'status' }));

await sleep(150);
console.log('after the state timeout:', (await StateMachine.getState(system, lock)).value);

StateMachine.cast(system, lock, { type: 'button', digit: 7 });
await sleep(100);
console.log('buttons:', JSON.stringify((await StateMachine.getState<typeof codeLock>(system, lock)).context.buttons));

const exited = system.exited(lock);
StateMachine.cast(system, lock, { type: 'decommission' });
console.log('stopped with:', await exited);
console.log('actors left:', system.actorCount);
