/**
 * Background work that runs on timers (a KV sweep, LISTEN's reconnect retries) either on the
 * clock or, once its child spec is placed in an application's tree, in an actor of that tree: each
 * timer then is a message in the actor's mailbox from a timer it owns, so the work shows in
 * `/tree`, and when the actor dies its supervisor starts another that takes the timers over.
 */
import type { ActorContext, Clock, ClockTimer, Ref } from '../actors/index.js';
import type { ChildSpec } from '../behaviours/index.js';

/** Where the work arms its next timer. */
export interface WorkTimers {
  set(run: () => void, delayMs: number): unknown;
  clear(timer: unknown): void;
}

/** Timers on `clock`, never holding the process open. */
export function clockTimers(clock: Clock): WorkTimers {
  return {
    set: (run, delayMs) => {
      const timer = clock.setTimer(run, delayMs);
      clock.unrefTimer?.(timer);
      return timer;
    },
    clear: (timer) => clock.clearTimer(timer as ClockTimer),
  };
}

const START = Symbol('timer-driver.start');

/** The message a driving actor's timer delivers: run the work's callback in the actor. */
interface Due {
  readonly timerDriverRun: () => void;
}

/** A child spec whose actor, once started, hands `adopt` the timers it owns. */
export function timerDriverChild(id: string, adopt: (timers: WorkTimers) => void): ChildSpec {
  return {
    id,
    start: ({ system, parent }: { system: ActorContext['system']; parent: Ref }) => {
      const ref = system.spawn((message: unknown, ctx: ActorContext) => {
        if (message === START) {
          adopt({
            set: (run, delayMs) => ctx.sendAfter(delayMs, { timerDriverRun: run } satisfies Due),
            clear: (timer) => void ctx.cancelTimer(timer as ReturnType<ActorContext['sendAfter']>),
          });
        } else if (typeof (message as Due | null)?.timerDriverRun === 'function') (message as Due).timerDriverRun();
      }, { link: parent });
      system.send(ref, START);
      return ref;
    },
  };
}
