/**
 * The pool's prefetch when the user left it unset (issue 28 §1): how many tasks the fetcher hands
 * one thread or process host at once, adapted to how long tasks take. A host's tasks travel in one
 * frame batch and come back together, so for short tasks a larger prefetch pays the crossing once
 * per batch instead of once per task; for long ones it would only queue tasks behind each other in
 * one host while others idle, so it stays low.
 *
 * Over each window of WINDOW finished tasks, the mean time a task took (from its worker's start
 * to its reply, so waiting behind batch mates counts): under SHORT_MS the prefetch doubles, up to
 * `cap`; over LONG_MS it halves, down to 1; in between it stays. Doubling and halving settle in a
 * few windows, and the band between the two bounds keeps it from flapping. A CPU-bound task that
 * is short alone gets slower in a batch (each waits for its mates), which holds it near the band.
 */

const WINDOW = 8;
const SHORT_MS = 5;
const LONG_MS = 25;

export class AdaptivePrefetch {
  #value = 1;
  #seen = 0;
  #totalMs = 0;

  constructor(readonly cap: number) {}

  get value(): number {
    return this.#value;
  }

  /** A task took `elapsedMs`; returns the prefetch from now on. */
  observe(elapsedMs: number): number {
    this.#seen++;
    this.#totalMs += Number.isFinite(elapsedMs) && elapsedMs > 0 ? elapsedMs : 0;
    if (this.#seen < WINDOW) return this.#value;
    const mean = this.#totalMs / this.#seen;
    this.#seen = 0;
    this.#totalMs = 0;
    if (mean < SHORT_MS) this.#value = Math.min(this.cap, this.#value * 2);
    else if (mean > LONG_MS) this.#value = Math.max(1, Math.floor(this.#value / 2));
    return this.#value;
  }
}
