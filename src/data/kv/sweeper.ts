/**
 * The background sweep of expired keys, on the store's clock: one bounded batch per tick, the next
 * tick at once (after yielding to the event loop) while batches come back full, else after the
 * interval (or, when the store knows it, not before the next key is due). The next tick is armed only
 * after the batch finished, so a slow database never has two sweeps of one store in flight.
 */
import type { Clock } from '../../actors/index.js';
import type { ChildSpec } from '../../behaviours/index.js';
import { clockTimers, timerDriverChild, type WorkTimers } from '../timer-driver.js';

export interface SweeperOptions {
  readonly clock: Clock;
  readonly intervalMs: number;
  readonly batch: number;
  /** Removes up to `batch` expired keys and returns how many. */
  readonly sweep: () => number | Promise<number>;
  /** When the earliest expiry is (ms since the epoch on the clock); undefined: nothing expires. Absent: unknown, tick every interval. */
  readonly nextExpiry?: () => number | undefined;
  readonly onError?: (error: unknown) => void;
}


export class Sweeper {
  readonly #options: SweeperOptions;
  #timers: WorkTimers;
  #timer: unknown;
  /** Wall time the armed timer fires at. */
  #wakeAt = Number.POSITIVE_INFINITY;
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(options: SweeperOptions) {
    this.#options = options;
    this.#timers = clockTimers(options.clock);
  }

  start(): void {
    this.#schedule();
  }

  /**
   * A child spec whose actor drives the sweep: each tick is a message in its mailbox from a timer
   * it owns, so the sweep shows in the application's tree, and when the actor dies its supervisor
   * starts another that takes the sweep over where it stood (the keys are in the store).
   */
  childSpec(id: string): ChildSpec {
    return timerDriverChild(id, (timers) => {
      this.#disarm();
      this.#timers = timers;
      if (this.#running === undefined) this.#schedule();
    });
  }

  /** A key expiring at `at` was written: wake by then (stores that know their next expiry call this). */
  expiring(at: number): void {
    if (this.#closed || this.#running !== undefined || at >= this.#wakeAt) return;
    this.#arm(Math.max(this.#options.intervalMs, at - this.#options.clock.wallNow()));
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#disarm();
    await this.#running;
  }

  #schedule(full = false): void {
    if (this.#closed) return;
    const { nextExpiry, intervalMs, clock } = this.#options;
    if (full) return this.#arm(0);
    if (nextExpiry === undefined) return this.#arm(intervalMs);
    const next = nextExpiry();
    if (next === undefined) return this.#disarm();
    this.#arm(Math.max(intervalMs, next - clock.wallNow()));
  }

  #arm(delayMs: number): void {
    this.#disarm();
    this.#wakeAt = this.#options.clock.wallNow() + delayMs;
    this.#timer = this.#timers.set(() => this.#tick(), delayMs);
  }

  #disarm(): void {
    if (this.#timer !== undefined) this.#timers.clear(this.#timer);
    this.#timer = undefined;
    this.#wakeAt = Number.POSITIVE_INFINITY;
  }

  #tick(): void {
    this.#timer = undefined;
    this.#wakeAt = Number.POSITIVE_INFINITY;
    let removed: number | Promise<number>;
    try {
      removed = this.#options.sweep();
    } catch (error) {
      this.#options.onError?.(error);
      return this.#schedule();
    }
    if (typeof removed === 'number') return this.#schedule(removed >= this.#options.batch);
    this.#running = removed.then(
      (count) => {
        this.#running = undefined;
        this.#schedule(count >= this.#options.batch);
      },
      (error: unknown) => {
        this.#running = undefined;
        this.#options.onError?.(error);
        this.#schedule();
      },
    );
  }
}
