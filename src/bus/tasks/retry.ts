/**
 * The retry schedule (S7-2): `delay(n) = min(base · 2^n + jitter, cap)`, jitter uniform in
 * 0..jitterMs. Pure, with the randomness injected, so tests and the queue's model test can pin it.
 */
import { exponentialBackoff } from '../../actors/backoff.js';
import { InvalidBusOption } from '../errors.js';

export interface RetryPolicy {
  /** Default 1,000 ms; 1..cap. */
  readonly baseMs?: number;
  /** Default 300,000 ms; at most 24 h. */
  readonly capMs?: number;
  /** Default 1,000 ms; 0..60,000. */
  readonly jitterMs?: number;
}

export type ResolvedRetryPolicy = Required<RetryPolicy>;

export const RETRY_DEFAULTS: ResolvedRetryPolicy = Object.freeze({ baseMs: 1_000, capMs: 300_000, jitterMs: 1_000 });

const MAX_CAP_MS = 24 * 60 * 60 * 1_000;
const MAX_JITTER_MS = 60_000;

/** Fills in the defaults and checks the ranges once; InvalidBusOption names the setting. */
export function resolveRetryPolicy(policy: RetryPolicy = {}): ResolvedRetryPolicy {
  const capMs = whole('retry.capMs', policy.capMs ?? RETRY_DEFAULTS.capMs, 1, MAX_CAP_MS);
  return Object.freeze({
    baseMs: whole('retry.baseMs', policy.baseMs ?? RETRY_DEFAULTS.baseMs, 1, capMs),
    capMs,
    jitterMs: whole('retry.jitterMs', policy.jitterMs ?? RETRY_DEFAULTS.jitterMs, 0, MAX_JITTER_MS),
  });
}

/**
 * Milliseconds to wait before retry number `attempt` (0 for the first retry). `random` returns a
 * number in [0, 1) as Math.random does; the jitter is a whole number of ms in 0..jitterMs.
 */
export function retryDelay(attempt: number, policy: ResolvedRetryPolicy = RETRY_DEFAULTS, random: () => number = Math.random): number {
  if (!Number.isInteger(attempt) || attempt < 0) throw new InvalidBusOption('retry.attempt', `must be a whole number >= 0, got ${String(attempt)}`);
  const jitter = Math.floor(random() * (policy.jitterMs + 1));
  // The jitter is added, not a spread, and may not pass the cap either.
  return Math.min(exponentialBackoff(policy, attempt) + jitter, policy.capMs);
}

function whole(option: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new InvalidBusOption(option, `must be an integer in ${min}..${max}, got ${String(value)}`);
  return value;
}
