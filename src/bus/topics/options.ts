/**
 * A broker's options: defaults and caps in one place, checked once by {@link resolveBrokerOptions}.
 * Everything past the boundary sees only {@link ResolvedBrokerOptions}.
 */
import type { Registry } from 'prom-client';
import { systemClock, type ActorSystem, type Clock } from '../../actors/index.js';
import type { Logger } from '../../telemetry/index.js';
import { InvalidBusOption } from '../errors.js';

/** Characters in a channel name or pattern (spec: 256). */
export const DEFAULT_MAX_CHANNEL_LENGTH = 256;
export const MAX_CHANNEL_LENGTH_CAP = 256;
/** Bytes in one payload (spec: 1 MiB). */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
export const MAX_PAYLOAD_BYTES_CAP = 16 * 1024 * 1024;
/** Messages one subscription holds before the oldest is dropped (spec: 1,024). */
export const DEFAULT_QUEUE_CAPACITY = 1024;
export const MAX_QUEUE_CAPACITY = 65_536;
/** Pattern subscriptions per broker (spec: 1,024). */
export const DEFAULT_MAX_PATTERN_SUBSCRIPTIONS = 1024;
export const MAX_PATTERN_SUBSCRIPTIONS_CAP = 16_384;
/** Subscriptions of any kind per broker. */
export const DEFAULT_MAX_SUBSCRIPTIONS = 65_536;
export const MAX_SUBSCRIPTIONS_CAP = 1_048_576;
/** Characters in a content-type hint. */
export const MAX_CONTENT_TYPE_LENGTH = 255;
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
export const JSON_CONTENT_TYPE = 'application/json';

/** The defaults of {@link BrokerOptions}, for reading (the caps are in {@link TOPIC_CAPS}). */
export const TOPIC_DEFAULTS = Object.freeze({
  maxChannelLength: DEFAULT_MAX_CHANNEL_LENGTH,
  maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES,
  queueCapacity: DEFAULT_QUEUE_CAPACITY,
  maxPatternSubscriptions: DEFAULT_MAX_PATTERN_SUBSCRIPTIONS,
  maxSubscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
  contentType: DEFAULT_CONTENT_TYPE,
});

/** The highest value each option of {@link BrokerOptions} accepts. */
export const TOPIC_CAPS = Object.freeze({
  maxChannelLength: MAX_CHANNEL_LENGTH_CAP,
  maxPayloadBytes: MAX_PAYLOAD_BYTES_CAP,
  queueCapacity: MAX_QUEUE_CAPACITY,
  maxPatternSubscriptions: MAX_PATTERN_SUBSCRIPTIONS_CAP,
  maxSubscriptions: MAX_SUBSCRIPTIONS_CAP,
  contentTypeLength: MAX_CONTENT_TYPE_LENGTH,
});

export interface BrokerOptions {
  /** Shown in logs and as the `broker` label of its metrics; default `default`. */
  readonly name?: string;
  /** Needed to subscribe actors (their refs must belong to it). */
  readonly system?: ActorSystem;
  /** Stamps `publishedAt` (`wallNow`) and paces retries to busy actors; default the system's clock. */
  readonly clock?: Clock;
  /** Adds the `molo_pubsub_*` metrics to this prom-client registry; absent, no metrics are kept. */
  readonly registry?: Registry;
  /** Subscriber callbacks that throw are logged here (at warn, sparingly); absent, they are only counted. */
  readonly logger?: Logger;
  /** Default {@link DEFAULT_MAX_CHANNEL_LENGTH}, at most {@link MAX_CHANNEL_LENGTH_CAP}. */
  readonly maxChannelLength?: number;
  /** Default {@link DEFAULT_MAX_PAYLOAD_BYTES}, at most {@link MAX_PAYLOAD_BYTES_CAP}. */
  readonly maxPayloadBytes?: number;
  /** Each subscription's queue; default {@link DEFAULT_QUEUE_CAPACITY}, at most {@link MAX_QUEUE_CAPACITY}. */
  readonly queueCapacity?: number;
  /** Default {@link DEFAULT_MAX_PATTERN_SUBSCRIPTIONS}, at most {@link MAX_PATTERN_SUBSCRIPTIONS_CAP}. */
  readonly maxPatternSubscriptions?: number;
  /** Default {@link DEFAULT_MAX_SUBSCRIPTIONS}, at most {@link MAX_SUBSCRIPTIONS_CAP}. */
  readonly maxSubscriptions?: number;
}

export interface ResolvedBrokerOptions {
  readonly name: string;
  readonly system: ActorSystem | undefined;
  readonly clock: Clock;
  readonly registry: Registry | undefined;
  readonly logger: Logger | undefined;
  readonly maxChannelLength: number;
  readonly maxPayloadBytes: number;
  readonly queueCapacity: number;
  readonly maxPatternSubscriptions: number;
  readonly maxSubscriptions: number;
}

export function resolveBrokerOptions(options: BrokerOptions): ResolvedBrokerOptions {
  const name = options.name ?? 'default';
  if (typeof name !== 'string' || name.length === 0 || name.length > 128) {
    throw new InvalidBusOption('name', 'must be a string of 1..128 characters');
  }
  return {
    name,
    system: options.system,
    clock: options.clock ?? options.system?.clock ?? systemClock,
    registry: options.registry,
    logger: options.logger?.child({ broker: name }),
    maxChannelLength: checkInteger('maxChannelLength', options.maxChannelLength, DEFAULT_MAX_CHANNEL_LENGTH, MAX_CHANNEL_LENGTH_CAP),
    maxPayloadBytes: checkInteger('maxPayloadBytes', options.maxPayloadBytes, DEFAULT_MAX_PAYLOAD_BYTES, MAX_PAYLOAD_BYTES_CAP),
    queueCapacity: checkQueueCapacity('queueCapacity', options.queueCapacity, DEFAULT_QUEUE_CAPACITY),
    maxPatternSubscriptions: checkInteger('maxPatternSubscriptions', options.maxPatternSubscriptions, DEFAULT_MAX_PATTERN_SUBSCRIPTIONS, MAX_PATTERN_SUBSCRIPTIONS_CAP),
    maxSubscriptions: checkInteger('maxSubscriptions', options.maxSubscriptions, DEFAULT_MAX_SUBSCRIPTIONS, MAX_SUBSCRIPTIONS_CAP),
  };
}

/** A queue capacity (the broker's default, or one subscription's own). */
export function checkQueueCapacity(option: string, value: number | undefined, fallback: number): number {
  return checkInteger(option, value, fallback, MAX_QUEUE_CAPACITY);
}

function checkInteger(option: string, value: number | undefined, fallback: number, cap: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > cap) {
    throw new InvalidBusOption(option, `must be an integer in 1..${cap}, got ${String(value)}`);
  }
  return value;
}
