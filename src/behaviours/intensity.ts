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
