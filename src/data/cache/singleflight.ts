/**
 * Singleflight: concurrent computes of one key run once and share the outcome. A flight that an
 * invalidation overtakes (its key deleted, a tag of it purged, the cache cleared, a newer `set`) still
 * answers its callers, but its result is not stored: it may have read the data before the write
 * that caused the invalidation. A flight that outlives the compute timeout fails its callers and
 * frees the key. The number of flights is capped.
 *
 * Timeouts share one timer: every flight has the same timeout, so the Map's insertion order is
 * deadline order and the timer only ever waits for the oldest flight. A compute costs no timer of
 * its own, and the timer, once armed, is left to fire (it is unref'd) rather than cleared and armed
 * again for every flight.
 */
import type { Clock, ClockTimer } from '../../actors/index.js';
import { CacheCapExceeded, CacheComputeTimeout } from './errors.js';

interface Flight<V> {
  readonly promise: Promise<V>;
  readonly tags: readonly string[];
  /** On the clock's `now()`. */
  readonly deadline: number;
  /** Overtaken by an invalidation: do not store the result. */
  stale: boolean;
  settled: boolean;
  reject(error: unknown): void;
}

export class Singleflight<V> {
  readonly #flights = new Map<string, Flight<V>>();
  readonly #clock: Clock;
  readonly #maxInflight: number;
  readonly #timeoutMs: number;
  #timer: ClockTimer | undefined;

  constructor(clock: Clock, maxInflight: number, timeoutMs: number) {
    this.#clock = clock;
    this.#maxInflight = maxInflight;
    this.#timeoutMs = timeoutMs;
  }

  get size(): number {
    return this.#flights.size;
  }

  /** The pending outcome of the key's compute, if one is in flight. */
  pending(key: string): Promise<V> | undefined {
    return this.#flights.get(key)?.promise;
  }

  /**
   * Starts `compute` for `key`; `store` is called with its value (before the callers see it) unless
   * the flight was overtaken by an invalidation.
   */
  run(key: string, tags: readonly string[], compute: (key: string) => V | Promise<V>, store: (value: V) => void): Promise<V> {
    if (this.#flights.size >= this.#maxInflight) throw new CacheCapExceeded('cache.maxInflight', this.#maxInflight, this.#flights.size + 1);
    let resolve!: (value: V) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<V>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const flight: Flight<V> = { promise, tags, deadline: this.#clock.now() + this.#timeoutMs, stale: false, settled: false, reject };
    // In the map before compute runs, so a compute that asks for its own key joins rather than recurses.
    this.#flights.set(key, flight);
    if (this.#timer === undefined) this.#arm(this.#timeoutMs);
    let result: V | Promise<V>;
    try {
      result = compute(key);
    } catch (error) {
      this.#finish(key, flight);
      reject(error);
      return promise;
    }
    Promise.resolve(result).then(
      (value) => {
        if (!this.#finish(key, flight)) return;
        if (!flight.stale) {
          try {
            store(value);
          } catch {
            // Not storable (over maxBytes, say): the callers still get their value.
          }
        }
        resolve(value);
      },
      (error: unknown) => {
        if (this.#finish(key, flight)) reject(error);
      },
    );
    return promise;
  }

  /** The key's flight, if any, will not store its result. */
  invalidateKey(key: string): void {
    const flight = this.#flights.get(key);
    if (flight !== undefined) flight.stale = true;
  }

  invalidateTag(tag: string): void {
    for (const flight of this.#flights.values()) if (flight.tags.includes(tag)) flight.stale = true;
  }

  invalidateAll(): void {
    for (const flight of this.#flights.values()) flight.stale = true;
  }

  /** Marks the flight settled and frees its key; false when it had already settled (timed out). */
  #finish(key: string, flight: Flight<V>): boolean {
    if (flight.settled) return false;
    flight.settled = true;
    if (this.#flights.get(key) === flight) this.#flights.delete(key);
    return true;
  }

  #arm(delayMs: number): void {
    const timer = this.#clock.setTimer(() => this.#expire(), Math.max(0, delayMs));
    this.#clock.unrefTimer?.(timer);
    this.#timer = timer;
  }

  /** Fails the flights past their deadline (the oldest first), then waits for the next oldest. */
  #expire(): void {
    this.#timer = undefined;
    const now = this.#clock.now();
    for (const [key, flight] of this.#flights) {
      if (flight.deadline > now) return this.#arm(flight.deadline - now);
      this.#finish(key, flight);
      flight.reject(new CacheComputeTimeout(key, this.#timeoutMs));
    }
  }
}
