/**
 * The system clock's `now()`, read coarsely: `performance.now()` costs about as much as a whole
 * cache hit, so hits share one reading for up to a millisecond (a timer clears it) or 1,024 reads
 * (so a long synchronous stretch cannot freeze it). An entry may thus live up to about a
 * millisecond past its TTL. Only for the system clock: an injected clock is read on every call.
 */
import { performance } from 'node:perf_hooks';

let cached = -1;
let reads = 0;
let armed = false;

function forget(): void {
  cached = -1;
  armed = false;
}

export function coarseNow(): number {
  if (cached >= 0 && (++reads & 1023) !== 0) return cached;
  cached = performance.now();
  if (!armed) {
    armed = true;
    setTimeout(forget, 1).unref();
  }
  return cached;
}
