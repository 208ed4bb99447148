/**
 * Limits a worker pool honours besides its own concurrency: a concurrency limit shared by several
 * pools (the "global" limit: one object passed to each), and a token-bucket rate limit of task
 * starts. Both are plain objects on the caller's event loop; nothing here blocks.
 */
import { systemClock, type Clock } from '../../actors/index.js';
import { InvalidBusOption } from '../errors.js';

/** Tasks running at once across every pool given this object. */
export class TaskConcurrencyLimit {
  #running = 0;
  readonly #waiters = new Set<() => void>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1 || max > 100_000) throw new InvalidBusOption('tasks.globalConcurrency', 'must be an integer in 1..100,000');
  }

  get running(): number {
    return this.#running;
  }

  get available(): number {
    return this.max - this.#running;
  }

  /** Takes up to `wanted` slots; answers how many it took. */
  take(wanted: number): number {
    const taken = Math.max(0, Math.min(wanted, this.max - this.#running));
    this.#running += taken;
    return taken;
  }

  release(count = 1): void {
    this.#running = Math.max(0, this.#running - count);
    for (const wake of [...this.#waiters]) wake();
  }

  /** Calls `wake` at each release until the returned function is called. */
  onRelease(wake: () => void): () => void {
    this.#waiters.add(wake);
    return () => this.#waiters.delete(wake);
  }
}

/** At most `max` starts per `perMs`, refilled continuously. */
export class TaskRateLimit {
  #tokens: number;
  #at: number;

  constructor(
    readonly max: number,
    readonly perMs: number,
    private readonly clock: Clock = systemClock,
  ) {
    if (!Number.isInteger(max) || max < 1 || max > 1_000_000) throw new InvalidBusOption('rateLimit.max', 'must be an integer in 1..1,000,000');
    if (!Number.isInteger(perMs) || perMs < 1 || perMs > 86_400_000) throw new InvalidBusOption('rateLimit.perMs', 'must be an integer in 1..86,400,000');
    this.#tokens = max;
    this.#at = clock.now();
  }

  #refill(): void {
    const now = this.clock.now();
    this.#tokens = Math.min(this.max, this.#tokens + ((now - this.#at) * this.max) / this.perMs);
    this.#at = now;
  }

  /** Whole starts allowed now. */
  available(): number {
    this.#refill();
    return Math.max(0, Math.floor(this.#tokens));
  }

  consume(count: number): void {
    this.#refill();
    this.#tokens -= count;
  }

  /** Ms until one more start is allowed. */
  waitMs(): number {
    this.#refill();
    return this.#tokens >= 1 ? 0 : Math.ceil(((1 - this.#tokens) * this.perMs) / this.max);
  }
}
