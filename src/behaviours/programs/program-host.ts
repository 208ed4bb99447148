/**
 * What the program code needs of the actor running it: its clock, its own timers, and a way for
 * process and probe callbacks (which run outside the actor) to hand their news to the mailbox.
 * The actor builds one in `init`; everything else takes it as a parameter.
 */
import type { ActorContext, TimerEntry } from '../../actors/index.js';

export interface ProgramHost {
  /** The actor clock's ms: restart windows, backoff, uptime. */
  now(): number;
  /** Wall-clock ms, for the times shown in status. */
  wallNow(): number;
  /**
   * Sends `message` to the actor itself; never throws (a dead actor's messages are dropped, and a
   * full mailbox loses the message rather than throw into the event loop).
   */
  post(message: unknown): void;
  /** An actor timer: it runs on the injected clock and dies with the actor. */
  sendAfter(delayMs: number, message: unknown): TimerEntry;
  cancelTimer(entry: TimerEntry): void;
  /** Output lines longer than this are split. */
  readonly maxLineBytes: number;
}

export function programHost(ctx: ActorContext, maxLineBytes: number): ProgramHost {
  const { system, self } = ctx;
  return {
    now: () => ctx.now(),
    wallNow: () => system.clock.wallNow(),
    post: (message) => {
      try {
        system.send(self, message);
      } catch {
        // A full mailbox (100,000 messages by default) loses the event; a lost probe result is
        // then counted as a failure by the probe timeout.
      }
    },
    sendAfter: (delayMs, message) => ctx.sendAfter(delayMs, message),
    cancelTimer: (entry) => {
      ctx.cancelTimer(entry);
    },
    maxLineBytes,
  };
}
