import { performance } from 'node:perf_hooks';

/**
 * Time as the runtime sees it. Everything that waits (timers, call timeouts, restart windows,
 * backoff) reads this interface, so tests can swap in a {@link SimulatedClock}.
 */
export interface Clock {
  /** Monotonic milliseconds; only differences are meaningful. */
  now(): number;
  /** Wall-clock milliseconds since the epoch, for timestamps people read. */
  wallNow(): number;
  setTimer(callback: () => void, delayMs: number): ClockTimer;
  clearTimer(timer: ClockTimer): void;
  /** Lets the process exit while `timer` is pending (optional; a no-op where it means nothing). */
  unrefTimer?(timer: ClockTimer): void;
  /** Undoes {@link unrefTimer}. */
  refTimer?(timer: ClockTimer): void;
}

export type ClockTimer = { readonly __clockTimer: true } | object;

export const systemClock: Clock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimer: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
  unrefTimer: (timer) => void (timer as NodeJS.Timeout).unref(),
  refTimer: (timer) => void (timer as NodeJS.Timeout).ref(),
};

/** A repeating timer on `clock` (re-armed after each run, so a slow callback never overlaps itself). */
export interface ClockInterval {
  cancel(): void;
}

/** Runs `callback` every `periodMs` on `clock`; unref'd where the clock supports it, so it never holds the process open. */
export function clockInterval(clock: Clock, periodMs: number, callback: () => void): ClockInterval {
  let timer: ClockTimer | undefined;
  let cancelled = false;
  const arm = (): void => {
    timer = clock.setTimer(() => {
      if (cancelled) return;
      arm();
      callback();
    }, periodMs);
    clock.unrefTimer?.(timer);
  };
  arm();
  return {
    cancel: () => {
      cancelled = true;
      if (timer !== undefined) clock.clearTimer(timer);
    },
  };
}

interface SimulatedTimer {
  readonly due: number;
  readonly seq: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/** A clock that moves only when told to; timers fire in due order during {@link advance}. */
export class SimulatedClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: SimulatedTimer[] = [];
  readonly #epoch: number;

  constructor(start = 0, epoch = Date.UTC(2026, 0, 1)) {
    this.#now = start;
    this.#epoch = epoch;
  }

  now(): number {
    return this.#now;
  }

  wallNow(): number {
    return this.#epoch + this.#now;
  }

  setTimer(callback: () => void, delayMs: number): ClockTimer {
    const timer: SimulatedTimer = { due: this.#now + Math.max(0, delayMs), seq: this.#seq++, callback, cancelled: false };
    // Kept sorted by (due, seq): insertion is rare next to the per-call fast paths that batch in TimerService.
    let index = this.#timers.length;
    while (index > 0 && compare(this.#timers[index - 1]!, timer) > 0) index--;
    this.#timers.splice(index, 0, timer);
    return timer;
  }

  clearTimer(timer: ClockTimer): void {
    (timer as SimulatedTimer).cancelled = true;
    const index = this.#timers.indexOf(timer as SimulatedTimer);
    if (index >= 0) this.#timers.splice(index, 1);
  }

  /** Moves time forward by `ms`, firing each due timer at its own instant, in order. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const next = this.#timers[0];
      if (next === undefined || next.due > target) break;
      this.#timers.shift();
      this.#now = Math.max(this.#now, next.due);
      next.callback();
    }
    this.#now = target;
  }

  /** When the next pending timer is due (on this clock's `now()`), or undefined if none is. */
  nextDue(): number | undefined {
    return this.#timers[0]?.due;
  }

  /**
   * Moves time to the next due timer and fires every timer due at that instant (including ones
   * they arm for the same instant). Returns false, moving nothing, when no timer is pending.
   */
  step(): boolean {
    const next = this.#timers[0];
    if (next === undefined) return false;
    this.#fireAt(next.due);
    return true;
  }

  /**
   * {@link advance}, letting the actors run between timers: after each instant's timers fire, it
   * awaits `between` (default: one turn of the event loop; pass `() => system.settle()` to let the
   * actors finish), so what they arm in response is due within the same advance. Deterministic:
   * no real time passes for the clock.
   */
  async advanceAsync(ms: number, between: () => Promise<void> | void = nextTurn): Promise<void> {
    const target = this.#now + ms;
    await between();
    for (;;) {
      const next = this.#timers[0];
      if (next === undefined || next.due > target) break;
      this.#fireAt(next.due);
      await between();
    }
    this.#now = Math.max(this.#now, target);
  }

  #fireAt(due: number): void {
    this.#now = Math.max(this.#now, due);
    for (;;) {
      const next = this.#timers[0];
      if (next === undefined || next.due > this.#now) return;
      this.#timers.shift();
      next.callback();
    }
  }

  /** Number of native-equivalent timers armed (the kernel keeps at most one). */
  get pendingTimers(): number {
    return this.#timers.length;
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function compare(a: SimulatedTimer, b: SimulatedTimer): number {
  return a.due - b.due || a.seq - b.seq;
}
