/**
 * Pool settings: every ceiling has a static default and a cap, and a value outside its range is a
 * typed error naming the option.
 */
import { InvalidDataConfig } from './errors.js';

export interface PoolConfig {
  /** Connections kept open even when idle (default 2). */
  readonly min?: number;
  /** Connections at most (default 32, cap 1,024). */
  readonly max?: number;
  /** How long a checkout may wait for a connection (default 5 s, cap 300 s). */
  readonly acquireTimeoutMs?: number;
  /** Callers allowed to wait for a checkout; one more fails fast with PoolExhausted (default 256, cap 65,536). */
  readonly maxWaiters?: number;
  /** An idle connection above `min` is closed after this long (default 60 s). */
  readonly idleTimeoutMs?: number;
  /** A connection is replaced once this old, when next idle (default 30 min). */
  readonly maxLifetimeMs?: number;
  /** A connection idle this long is pinged before it is handed out (default 30 s). */
  readonly probeAfterIdleMs?: number;
  /** Reconnect backoff: first delay and cap (default 100 ms and 10 s), doubling in between. */
  readonly reconnectInitialMs?: number;
  readonly reconnectMaxMs?: number;
  /** How often idle eviction and lifetimes are checked (default 1 s). */
  readonly reapIntervalMs?: number;
}

export type ResolvedPoolConfig = { readonly [K in keyof PoolConfig]-?: number };

export const POOL_DEFAULTS: ResolvedPoolConfig = {
  min: 2,
  max: 32,
  acquireTimeoutMs: 5_000,
  maxWaiters: 256,
  idleTimeoutMs: 60_000,
  maxLifetimeMs: 30 * 60_000,
  probeAfterIdleMs: 30_000,
  reconnectInitialMs: 100,
  reconnectMaxMs: 10_000,
  reapIntervalMs: 1_000,
};

const LIMITS: { readonly [K in keyof PoolConfig]-?: readonly [number, number] } = {
  min: [0, 1024],
  max: [1, 1024],
  acquireTimeoutMs: [1, 300_000],
  maxWaiters: [0, 65_536],
  idleTimeoutMs: [10, 24 * 3_600_000],
  maxLifetimeMs: [10, 7 * 24 * 3_600_000],
  probeAfterIdleMs: [0, 24 * 3_600_000],
  reconnectInitialMs: [1, 60_000],
  reconnectMaxMs: [1, 600_000],
  reapIntervalMs: [5, 60_000],
};

export function resolvePoolConfig(config: PoolConfig = {}, defaults: ResolvedPoolConfig = POOL_DEFAULTS): ResolvedPoolConfig {
  const resolved = { ...defaults } as Record<keyof PoolConfig, number>;
  for (const key of Object.keys(LIMITS) as (keyof PoolConfig)[]) {
    const value = config[key];
    if (value === undefined) continue;
    const [low, high] = LIMITS[key];
    if (!Number.isInteger(value) || value < low || value > high) {
      throw new InvalidDataConfig(`pool.${key}`, `${String(value)} is not an integer in ${low}..${high}`);
    }
    resolved[key] = value;
  }
  if (resolved.min > resolved.max) throw new InvalidDataConfig('pool.min', `min (${resolved.min}) exceeds max (${resolved.max})`);
  return resolved;
}
