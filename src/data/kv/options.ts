/**
 * Options every KV store takes, each with a static default and a range; a value outside it is an
 * InvalidDataConfig naming the option.
 */
import { systemClock, type Clock } from '../../actors/index.js';
import { InvalidDataConfig } from '../errors.js';

export interface KvCommonOptions {
  /** Decides expiry (its `wallNow()` at write time plus the TTL) and drives the sweep. Default: the system clock. */
  readonly clock?: Clock;
  /** How often the background sweep looks for expired keys (default 1,000 ms; 10..3,600,000). */
  readonly sweepIntervalMs?: number;
  /** Expired keys one sweep batch removes at most (default 1,000; 1..100,000). */
  readonly sweepBatch?: number;
}

export const KV_SWEEP_DEFAULTS = Object.freeze({ sweepIntervalMs: 1_000, sweepBatch: 1_000 });

export interface ResolvedCommon {
  readonly clock: Clock;
  readonly sweepIntervalMs: number;
  readonly sweepBatch: number;
}

export function integerOption(name: string, value: unknown, fallback: number, min: number, max: number): number {
  const resolved = value ?? fallback;
  if (typeof resolved !== 'number' || !Number.isInteger(resolved) || resolved < min || resolved > max) {
    throw new InvalidDataConfig(name, `must be an integer in ${min}..${max}, got ${String(resolved)}`);
  }
  return resolved;
}

export function resolveCommon(options: KvCommonOptions | undefined): ResolvedCommon {
  const clock = options?.clock ?? systemClock;
  if (typeof clock?.wallNow !== 'function' || typeof clock.setTimer !== 'function') throw new InvalidDataConfig('kv.clock', 'must be a Clock');
  return {
    clock,
    sweepIntervalMs: integerOption('kv.sweepIntervalMs', options?.sweepIntervalMs, KV_SWEEP_DEFAULTS.sweepIntervalMs, 10, 3_600_000),
    sweepBatch: integerOption('kv.sweepBatch', options?.sweepBatch, KV_SWEEP_DEFAULTS.sweepBatch, 1, 100_000),
  };
}
