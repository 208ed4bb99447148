import type { AnyMachineSnapshot, EventObject, StateValue } from 'xstate';
import {
  CallRequest,
  ExitMessage,
  type ActorBehaviour,
  type ActorContext,
  type Envelope,
  type ExitReason,
  type Ref,
} from '../../actors/index.js';
import { InvalidStateMachineDefinition, NotInTransition, UnsupportedMachineFeature } from '../errors.js';
import { StopRequest } from '../stop-request.js';
import type { ResolvedDefinition } from './definition.js';
import { EventQueue } from './event-queue.js';
import { EVENT_TIMEOUT, GENERIC_TIMEOUT, isEventObject, sameStateValue, STATE_TIMEOUT, toMachineEvent } from './events.js';
import { bindHost, type StateMachineActor } from './host.js';
import { TimeoutFired, Timeouts, type TimeoutOptions } from './timeouts.js';
import { createMachineScope, type MachineScope } from './xstate-scope.js';

/** Inserted and postponed events handled in one turn before the actor yields to the event loop. */
export const EVENTS_PER_TURN = 1_024;

/** The request of `StateMachine.getState` (OTP's `sys:get_state`); it is not an event. */
export class StateQuery {}

/** What `StateMachine.getState` answers. */
export interface StateMachineStatus<Context = unknown> {
  readonly value: StateValue;
  readonly context: Context;
  readonly status: AnyMachineSnapshot['status'];
  /** Events postponed until the state changes. */
  readonly postponed: number;
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs one xstate machine as an actor, gen_statem style: each mailbox message is one event (a
 * macrostep); inserted events, then postponed ones after a state change, go before the mailbox;
 * timeouts are the actor's own timers; a final state stops the actor with `normal`; an action that
 * throws crashes it with that error.
 */
export class StateMachineRunner implements ActorBehaviour<unknown>, StateMachineActor {
  readonly name: string;
  #ctx!: ActorContext;
  #scope!: MachineScope;
  #timeouts!: Timeouts;
  readonly #queue: EventQueue;
  #snapshot: AnyMachineSnapshot | undefined;
  /** The event of the transition in progress; undefined between transitions and in the initial one. */
  #current: EventObject | undefined;
  #inTransition = false;
  #postponing = false;
  #stopping = false;
  /** Promises of async effects run by the current transition: the next event waits for them. */
  #pending: PromiseLike<unknown>[] = [];

  constructor(
    readonly definition: ResolvedDefinition,
    readonly input: unknown,
    /** OTP's parent: an EXIT from it makes a trapping machine stop with the same reason. */
    readonly parent: Ref | undefined,
  ) {
    this.name = definition.name;
    this.#queue = new EventQueue(definition.maxPostponed, definition.maxInserted);
  }

  get ctx(): ActorContext {
    return this.#ctx;
  }

  // ---- ActorBehaviour ---------------------------------------------------------------------

  init(ctx: ActorContext): void | PromiseLike<void> {
    this.#ctx = ctx;
    this.#timeouts = new Timeouts(ctx, (message) => this.#queue.appendTimeout(message));
    this.#scope = createMachineScope({
      ctx,
      timeouts: this.#timeouts,
      onEmit: this.definition.onEmit,
      logger: this.definition.logger,
    });
    bindHost(this.#scope.self, this);
    this.#inTransition = true;
    let snapshot: AnyMachineSnapshot;
    try {
      snapshot = this.definition.machine.getInitialSnapshot(this.#scope.scope, this.input);
    } finally {
      this.#inTransition = false;
    }
    // xstate returns a failed initial transition as an error snapshot rather than throwing.
    if (snapshot.status === 'error') throw snapshot.error;
    this.#snapshot = snapshot;
    this.#settle(snapshot, false);
    return this.#drain();
  }

  handle(ctx: ActorContext, message: Envelope<unknown>): void | PromiseLike<void> {
    let event: EventObject | undefined;
    if (message instanceof TimeoutFired) {
      event = this.#timeouts.claim(message);
      if (event === undefined) return; // cancelled or replaced after it was queued
    } else if (message instanceof CallRequest && message.request instanceof StateQuery) {
      message.reply(this.#status());
      return;
    } else if (message instanceof StopRequest) {
      this.stop(message.reason);
      return;
    } else if (message instanceof ExitMessage && this.#isParent(ctx, message.from)) {
      this.stop(message.reason);
      return;
    } else {
      event = toMachineEvent(message);
    }
    this.#transition(event);
    return this.#drain();
  }

  terminate(ctx: ActorContext, reason: ExitReason): void | PromiseLike<void> {
    return this.definition.terminate?.(ctx, reason, this.#snapshot);
  }

  // ---- transitions --------------------------------------------------------------------------

  /** One event, one macrostep, then the bookkeeping gen_statem does after a transition. */
  #transition(event: EventObject): void {
    if (this.#stopping) return;
    const before = this.#snapshot!;
    const stateTimer = this.#timeouts.stateTimer;
    this.#timeouts.cancelEvent(); // any event cancels the event timeout
    this.#current = event;
    this.#postponing = false;
    this.#inTransition = true;
    let after: AnyMachineSnapshot;
    try {
      after = this.definition.machine.transition(before, event, this.#scope.scope);
    } finally {
      this.#current = undefined;
      this.#inTransition = false;
    }
    this.#snapshot = after;
    const changed = !sameStateValue(before.value, after.value);
    // A state timeout set by this very transition belongs to the new state and survives.
    if (changed && this.#timeouts.stateTimer === stateTimer) this.#timeouts.cancelState();
    this.#settle(after, changed);
  }

  #settle(snapshot: AnyMachineSnapshot, changed: boolean): void {
    if (snapshot.status === 'error') throw snapshot.error;
    // `spawn` (in context or assign) creates children without an action the scope could refuse;
    // refuse them here, before the deferred work that would start them runs.
    for (const id in snapshot.children) {
      throw new UnsupportedMachineFeature(
        'spawn',
        `child '${id}': spawn Molo actors with effect((actor) => actor.ctx.spawnLink(...))`,
      );
    }
    this.#scope.flush();
    this.#queue.commit(changed);
    if (snapshot.status === 'done') this.stop('normal');
  }

  /**
   * Handles inserted, postponed and zero-timeout events; waits for the async effects of each
   * transition before the next event (as a GenServer's async callback holds its next message);
   * yields to the event loop every EVENTS_PER_TURN.
   */
  #drain(): void | Promise<void> {
    const ctx = this.ctx;
    const again = (): void | Promise<void> => (ctx.system.isAlive(ctx.self) ? this.#drain() : undefined);
    for (let budget = EVENTS_PER_TURN; ; budget--) {
      if (this.#pending.length > 0) {
        const pending = this.#pending;
        this.#pending = [];
        return Promise.all(pending).then(again);
      }
      if (this.#stopping || this.#queue.length === 0) return;
      if (budget === 0) return yieldToEventLoop().then(again);
      const next = this.#queue.next()!;
      if (next instanceof TimeoutFired) {
        // A zero timeout: stale if cancelled, replaced, or (an event timeout) beaten by another event.
        const event = this.#timeouts.claim(next);
        if (event !== undefined) this.#transition(event);
      } else {
        this.#transition(next);
      }
    }
  }

  #status(): StateMachineStatus {
    const snapshot = this.#snapshot!;
    return { value: snapshot.value, context: snapshot.context, status: snapshot.status, postponed: this.#queue.postponedCount };
  }

  #isParent(ctx: ActorContext, from: Ref): boolean {
    const parent = this.parent ?? ctx.parent;
    return parent !== undefined && from.equals(parent);
  }

  // ---- StateMachineActor ------------------------------------------------------------------------

  postpone(): void {
    if (!this.#inTransition || this.#current === undefined) throw new NotInTransition('postpone()');
    if (this.#postponing) return;
    this.#queue.postpone(this.#current);
    this.#postponing = true;
  }

  nextEvent<E extends EventObject>(event: E): void {
    if (!this.#inTransition) throw new NotInTransition('nextEvent()');
    this.#queue.insert(checkEvent('nextEvent()', event));
  }

  stateTimeout<E extends EventObject>(delayMs: number, event?: E, options?: TimeoutOptions): void {
    this.#timeouts.setState(delayMs, event === undefined ? { type: STATE_TIMEOUT } : checkEvent('stateTimeout()', event), options);
  }

  eventTimeout<E extends EventObject>(delayMs: number, event?: E, options?: TimeoutOptions): void {
    this.#timeouts.setEvent(delayMs, event === undefined ? { type: EVENT_TIMEOUT } : checkEvent('eventTimeout()', event), options);
  }

  genericTimeout<E extends EventObject>(name: unknown, delayMs: number, event?: E, options?: TimeoutOptions): void {
    if (name === undefined || name === '') {
      throw new InvalidStateMachineDefinition('genericTimeout()', 'name must be a value other than undefined and the empty string', name);
    }
    this.#timeouts.setGeneric(name, delayMs, event === undefined ? defaultGenericEvent(name) : checkEvent('genericTimeout()', event), options);
  }

  updateTimeout<E extends EventObject>(kind: 'state' | 'event' | 'generic', event: E, name?: unknown): void {
    this.#timeouts.update(kind, name, checkEvent('updateTimeout()', event));
  }

  cancelTimeout(name: unknown): void {
    this.#timeouts.cancelGeneric(name);
  }

  awaitEffect(settling: PromiseLike<unknown>): void {
    this.#pending.push(settling);
  }

  cancelStateTimeout(): void {
    this.#timeouts.cancelState();
  }

  stop(reason: ExitReason = 'normal'): void {
    if (this.#stopping) return;
    this.#stopping = true;
    this.ctx.stop(reason);
  }
}

/** A generic timeout's event when none is given: `{ type: name }` for a string name, else `{ type: 'generic_timeout', name }`. */
function defaultGenericEvent(name: unknown): EventObject {
  return typeof name === 'string' ? { type: name } : ({ type: GENERIC_TIMEOUT, name } as EventObject);
}

function checkEvent(action: string, event: EventObject): EventObject {
  if (!isEventObject(event)) throw new InvalidStateMachineDefinition(action, 'the event must be an object with a string type');
  return event;
}
