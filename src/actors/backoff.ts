/**
 * The one exponential-backoff computation: restarts, retries, reconnects and naks all wait
 * `base · factor^attempt`, capped, and some spread it with jitter. In the kernel so that every layer
 * can use it; pure, with the randomness injected, so tests can pin a schedule.
 */

export interface ExponentialBackoff {
  /** The first delay (attempt 0). */
  readonly baseMs: number;
  /** No delay is longer, before jitter. */
  readonly capMs: number;
  /** Growth per attempt; default 2. */
  readonly factor?: number;
  /**
   * Multiplies the capped delay by a uniform factor in [low, high): `[0.75, 1.25]` spreads it
   * ±25 %, so peers that failed together do not retry in lockstep. None by default.
   */
  readonly jitter?: readonly [low: number, high: number];
}

/**
 * Whole milliseconds to wait before attempt number `attempt` (0-based). `random` returns a number in
 * [0, 1) as Math.random does; it is called once, and only when `jitter` is set.
 */
export function exponentialBackoff(backoff: ExponentialBackoff, attempt: number, random: () => number = Math.random): number {
  // factor^attempt overflows to Infinity for a large attempt: min() still yields the cap, and a
  // zero base stays zero rather than 0 · Infinity = NaN.
  const grown = backoff.baseMs === 0 ? 0 : backoff.baseMs * (backoff.factor ?? 2) ** attempt;
  const capped = Math.min(backoff.capMs, grown);
  if (backoff.jitter === undefined) return Math.round(capped);
  const [low, high] = backoff.jitter;
  return Math.round(capped * (low + random() * (high - low)));
}
