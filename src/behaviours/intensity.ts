/**
 * The restart intensity window, as OTP's supervisor keeps it: restarts older than `periodMs` age
 * out; adding one more restart exceeds the intensity when more than `intensity` remain.
 * A restart exactly `periodMs` ago still counts (OTP keeps `R >= Now - Period`). Times are the
 * injected clock's milliseconds, where OTP counts whole seconds.
 */
export interface RestartWindow {
  readonly restarts: readonly number[];
  readonly exceeded: boolean;
}

export function addRestart(restarts: readonly number[], now: number, intensity: number, periodMs: number): RestartWindow {
  const threshold = now - periodMs;
  const kept = restarts.filter((at) => at >= threshold);
  kept.push(now);
  return { restarts: kept, exceeded: kept.length > intensity };
}

/** Restarts still inside the window at `now`, without adding one. */
export function restartsInWindow(restarts: readonly number[], now: number, periodMs: number): number {
  const threshold = now - periodMs;
  let count = 0;
  for (const at of restarts) if (at >= threshold) count++;
  return count;
}

/**
 * The same window kept incrementally, for the restart path: amortized O(1) per restart where
 * {@link addRestart} copies the list. Timestamps only grow, so aged-out restarts are always at
 * the front; and only the newest `intensity + 1` can ever decide an answer, so no more are kept.
 * A property test holds it to {@link addRestart}.
 */
export class RestartLog {
  #times: number[] = [];
  #head = 0;

  constructor(
    readonly intensity: number,
    readonly periodMs: number,
  ) {}

  /** Records a restart at `now`; true when it exceeds the intensity (as `addRestart(...).exceeded`). */
  add(now: number): boolean {
    this.#age(now);
    this.#times.push(now);
    if (this.#times.length - this.#head > this.intensity + 1) this.#head++;
    this.#compact();
    return this.#times.length - this.#head > this.intensity;
  }

  /** Restarts still inside the window at `now`. */
  count(now: number): number {
    this.#age(now);
    return this.#times.length - this.#head;
  }

  /** The restarts kept, oldest first. */
  timestamps(): number[] {
    return this.#times.slice(this.#head);
  }

  #age(now: number): void {
    const threshold = now - this.periodMs;
    const times = this.#times;
    while (this.#head < times.length && times[this.#head]! < threshold) this.#head++;
  }

  #compact(): void {
    if (this.#head > 64 && this.#head * 2 > this.#times.length) {
      this.#times = this.#times.slice(this.#head);
      this.#head = 0;
    }
  }
}
