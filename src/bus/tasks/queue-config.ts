/** A queue's settings, resolved once (defaults filled, ranges checked) and stored as JSON in its row. */
import { InvalidBusOption, refuseUnknownBusOptions } from '../errors.js';
import type { TaskQueueConfig, TaskShutdownPolicy } from './api.js';
import { TASK_CAPS, TASK_DEFAULTS } from './envelope.js';
import { resolveRetryPolicy, type ResolvedRetryPolicy } from './retry.js';

export interface ResolvedTaskQueueConfig {
  readonly maxDepth: number;
  readonly maxPayloadBytes: number;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly retry: ResolvedRetryPolicy;
  readonly deadLetterRetainMs: number;
  readonly deadLetterMaxEntries: number;
  readonly onShutdown: TaskShutdownPolicy;
}

export const TASK_QUEUE_LIMITS = Object.freeze({
  deadLetterRetainMs: 7 * 24 * 60 * 60 * 1_000,
  deadLetterMaxEntries: 10_000,
  maxLeaseMs: 60 * 60 * 1_000,
  /** Queues one store holds. */
  maxQueues: 1_000,
  /** Tasks one `lease` takes, one `enqueueMany` adds, one `settle` or `heartbeat` names. */
  maxBatch: 10_000,
  maxQueueNameLength: 255,
});

const QUEUE_NAME = /^[A-Za-z0-9_.:-]+$/;

export function checkQueueName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > TASK_QUEUE_LIMITS.maxQueueNameLength || !QUEUE_NAME.test(name)) {
    throw new InvalidBusOption('queue', `must be 1..${TASK_QUEUE_LIMITS.maxQueueNameLength} characters of A-Z a-z 0-9 _ . : -`);
  }
  return name;
}

const QUEUE_CONFIG_KEYS: readonly (keyof TaskQueueConfig)[] = ['maxDepth', 'maxPayloadBytes', 'leaseMs', 'heartbeatMs', 'retry', 'deadLetterRetainMs', 'deadLetterMaxEntries', 'onShutdown'];

export function resolveQueueConfig(config: TaskQueueConfig = {}): ResolvedTaskQueueConfig {
  if (config === null || typeof config !== 'object') throw new InvalidBusOption('queue config', 'must be an object');
  refuseUnknownBusOptions('queue config', config, QUEUE_CONFIG_KEYS);
  const leaseMs = whole('leaseMs', config.leaseMs, TASK_DEFAULTS.leaseMs, 100, TASK_QUEUE_LIMITS.maxLeaseMs);
  const onShutdown = config.onShutdown ?? 'requeue';
  if (onShutdown !== 'requeue' && onShutdown !== 'dead-letter') throw new InvalidBusOption('onShutdown', "must be 'requeue' or 'dead-letter'");
  return Object.freeze({
    maxDepth: whole('maxDepth', config.maxDepth, TASK_CAPS.maxQueueDepth, 1, TASK_CAPS.maxQueueDepth),
    maxPayloadBytes: whole('maxPayloadBytes', config.maxPayloadBytes, TASK_CAPS.maxPayloadBytes, 0, TASK_CAPS.maxPayloadBytes),
    leaseMs,
    // A heartbeat must come well inside the lease it renews.
    heartbeatMs: whole('heartbeatMs', config.heartbeatMs, Math.min(TASK_DEFAULTS.heartbeatMs, Math.floor(leaseMs / 4)), 10, Math.floor(leaseMs / 2)),
    retry: resolveRetryPolicy(config.retry),
    deadLetterRetainMs: whole('deadLetterRetainMs', config.deadLetterRetainMs, TASK_QUEUE_LIMITS.deadLetterRetainMs, 1, TASK_QUEUE_LIMITS.deadLetterRetainMs),
    deadLetterMaxEntries: whole('deadLetterMaxEntries', config.deadLetterMaxEntries, TASK_QUEUE_LIMITS.deadLetterMaxEntries, 1, TASK_QUEUE_LIMITS.deadLetterMaxEntries),
    onShutdown,
  });
}

export function whole(option: string, value: number | undefined, fallback: number, min: number, max: number): number {
  const resolved = value ?? fallback;
  if (!Number.isInteger(resolved) || resolved < min || resolved > max) {
    throw new InvalidBusOption(`tasks.${option}`, `must be an integer in ${min}..${max}, got ${String(resolved)}`);
  }
  return resolved;
}
