/**
 * Stream and consumer settings: resolved once at the boundary (defaults filled in, each held to its
 * range and cap), stored as JSON, and compared when a stream or consumer is created again.
 */
import { StreamConflict, StreamInvalidArgument } from './errors.js';
import { unknownOptionKey } from '../../actors/option-keys.js';
import { checkInteger, checkSeq, CONSUMER_DEFAULTS, STREAM_DEFAULTS, STREAM_LIMITS, STREAM_RETENTION_CEILINGS } from './limits.js';
import type { ConsumerConfig, DeliverPolicy, ResolvedConsumerConfig, ResolvedStreamConfig, StreamConfig } from './store.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

const STREAM_CONFIG_KEYS: readonly (keyof StreamConfig)[] = ['maxAgeMs', 'maxBytes', 'maxMsgs', 'retention', 'dedupWindowMs'];
const CONSUMER_CONFIG_KEYS: readonly (keyof ConsumerConfig)[] = ['deliverPolicy', 'ackWaitMs', 'maxDeliver', 'maxAckPending'];

/** A misspelt setting (`maxAge`) would leave its default in force: refused, naming the nearest one. */
function refuseUnknown(what: string, config: object, known: readonly string[]): void {
  const unknown = unknownOptionKey(config, known);
  if (unknown !== undefined) throw new StreamInvalidArgument(`${what} ${unknown.key}`, unknown.detail);
}

/** How far a stream's retention may reach: the seed's ceilings, or the store's `retentionCeilings`. */
export interface RetentionCeilings {
  readonly maxAgeMs: number;
  readonly maxBytes: number;
}

/** A store's `retentionCeilings`: each at least the seed's (a lower one is just a stream setting) and a safe integer. */
export function resolveRetentionCeilings(ceilings: Partial<RetentionCeilings> | undefined): RetentionCeilings {
  if (ceilings === undefined) return STREAM_RETENTION_CEILINGS;
  if (ceilings === null || typeof ceilings !== 'object') throw new StreamInvalidArgument('retentionCeilings', 'must be an object { maxAgeMs?, maxBytes? }');
  refuseUnknown('retentionCeilings', ceilings, ['maxAgeMs', 'maxBytes']);
  return {
    maxAgeMs: checkInteger('retentionCeilings.maxAgeMs', ceilings.maxAgeMs, STREAM_RETENTION_CEILINGS.maxAgeMs, STREAM_RETENTION_CEILINGS.maxAgeMs, MAX_SAFE),
    maxBytes: checkInteger('retentionCeilings.maxBytes', ceilings.maxBytes, STREAM_RETENTION_CEILINGS.maxBytes, STREAM_RETENTION_CEILINGS.maxBytes, MAX_SAFE),
  };
}

export function resolveStreamConfig(config: StreamConfig = {}, ceilings: RetentionCeilings = STREAM_RETENTION_CEILINGS): ResolvedStreamConfig {
  if (config === null || typeof config !== 'object') throw new StreamInvalidArgument('stream config', 'must be an object');
  refuseUnknown('stream config', config, STREAM_CONFIG_KEYS);
  const retention = config.retention ?? 'limits';
  if (retention !== 'limits' && retention !== 'workqueue') throw new StreamInvalidArgument('retention', "must be 'limits' or 'workqueue'");
  return {
    maxAgeMs: checkInteger('maxAgeMs', config.maxAgeMs, STREAM_DEFAULTS.maxAgeMs, 1, ceilings.maxAgeMs, 'streams.maxAgeMs'),
    maxBytes: checkInteger('maxBytes', config.maxBytes, STREAM_DEFAULTS.maxBytes, 1, ceilings.maxBytes, 'streams.maxBytes'),
    maxMsgs: checkInteger('maxMsgs', config.maxMsgs, STREAM_DEFAULTS.maxMsgs, 1, MAX_SAFE),
    retention,
    dedupWindowMs: checkInteger('dedupWindowMs', config.dedupWindowMs, STREAM_DEFAULTS.dedupWindowMs, 0, STREAM_LIMITS.maxDedupWindowMs, 'streams.maxDedupWindowMs'),
  };
}

function resolveDeliverPolicy(policy: unknown): DeliverPolicy {
  if (policy === undefined || policy === 'all') return 'all';
  if (policy === 'new') return 'new';
  if (policy !== null && typeof policy === 'object') {
    if ('startSeq' in policy) return { startSeq: checkSeq((policy as { startSeq: unknown }).startSeq) };
    if ('startTime' in policy) {
      const time = (policy as { startTime: unknown }).startTime;
      if (typeof time === 'number' && Number.isFinite(time)) return { startTime: Math.floor(time) };
    }
  }
  throw new StreamInvalidArgument('deliverPolicy', "must be 'all', 'new', { startSeq } or { startTime }");
}

export function resolveConsumerConfig(config: ConsumerConfig = {}): ResolvedConsumerConfig {
  if (config === null || typeof config !== 'object') throw new StreamInvalidArgument('consumer config', 'must be an object');
  refuseUnknown('consumer config', config, CONSUMER_CONFIG_KEYS);
  return {
    deliverPolicy: resolveDeliverPolicy(config.deliverPolicy),
    ackWaitMs: checkInteger('ackWaitMs', config.ackWaitMs, CONSUMER_DEFAULTS.ackWaitMs, 1, STREAM_LIMITS.maxAckWaitMs, 'streams.maxAckWaitMs'),
    maxDeliver: checkInteger('maxDeliver', config.maxDeliver, CONSUMER_DEFAULTS.maxDeliver, 1, STREAM_LIMITS.maxDeliver, 'streams.maxDeliver'),
    maxAckPending: checkInteger('maxAckPending', config.maxAckPending, CONSUMER_DEFAULTS.maxAckPending, 1, STREAM_LIMITS.maxAckPending, 'streams.maxAckPending'),
  };
}

/** Throws StreamConflict naming the first setting where `stored` and `asked` differ. */
export function sameSettings(what: string, stored: object, asked: object): void {
  for (const [key, value] of Object.entries(asked)) {
    if (JSON.stringify((stored as Record<string, unknown>)[key]) !== JSON.stringify(value)) throw new StreamConflict(what, key);
  }
}
