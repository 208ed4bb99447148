/**
 * A broker's options: defaults and caps in one place, checked once by {@link resolveBrokerOptions}.
 * Everything past the boundary sees only {@link ResolvedBrokerOptions}.
 */
import type { Registry } from 'prom-client';
import { systemClock, type ActorSystem, type Clock } from '../../actors/index.js';
import type { Logger } from '../../telemetry/index.js';
import { unknownOptionKey } from '../../actors/option-keys.js';
import { InvalidBusOption, refuseUnknownBusOptions } from '../errors.js';

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

/**
 * The seed's ceilings (04 Pubsub: 1 MiB payloads, 1,024 patterns per broker, 1,024 per-subscriber
 * queue): options may lower them; raising one takes `ceilings`, by name, up to {@link TOPIC_CAPS}.
 */
export const TOPIC_SEED_CEILINGS = Object.freeze({
  maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES,
  queueCapacity: DEFAULT_QUEUE_CAPACITY,
  maxPatternSubscriptions: DEFAULT_MAX_PATTERN_SUBSCRIPTIONS,
});

export type TopicCeilings = { -readonly [K in keyof typeof TOPIC_SEED_CEILINGS]: number };

/** The highest value each option of {@link BrokerOptions} accepts, `ceilings` included. */
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
  /**
   * Raises the seed's ceilings of `maxPayloadBytes`, `queueCapacity` (broker and subscription) and
   * `maxPatternSubscriptions` (default {@link TOPIC_SEED_CEILINGS}), each at most its {@link TOPIC_CAPS}.
   */
  readonly ceilings?: Partial<TopicCeilings>;
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
  readonly ceilings: Readonly<TopicCeilings>;
}

const BROKER_OPTION_KEYS: readonly (keyof BrokerOptions)[] = ['name', 'system', 'clock', 'registry', 'logger', 'maxChannelLength', 'maxPayloadBytes', 'queueCapacity', 'maxPatternSubscriptions', 'maxSubscriptions', 'ceilings'];

export function resolveBrokerOptions(options: BrokerOptions): ResolvedBrokerOptions {
  refuseUnknownBusOptions('broker', options, BROKER_OPTION_KEYS);
  const name = options.name ?? 'default';
  if (typeof name !== 'string' || name.length === 0 || name.length > 128) {
    throw new InvalidBusOption('name', 'must be a string of 1..128 characters');
  }
  const ceilings = resolveCeilings(options.ceilings);
  return {
    name,
    ceilings,
    system: options.system,
    clock: options.clock ?? options.system?.clock ?? systemClock,
    registry: options.registry,
    logger: options.logger?.child({ broker: name }),
    maxChannelLength: checkInteger('maxChannelLength', options.maxChannelLength, DEFAULT_MAX_CHANNEL_LENGTH, MAX_CHANNEL_LENGTH_CAP),
    maxPayloadBytes: checkCeiling('maxPayloadBytes', options.maxPayloadBytes, DEFAULT_MAX_PAYLOAD_BYTES, ceilings),
    queueCapacity: checkQueueCapacity('queueCapacity', options.queueCapacity, DEFAULT_QUEUE_CAPACITY, ceilings),
    maxPatternSubscriptions: checkCeiling('maxPatternSubscriptions', options.maxPatternSubscriptions, DEFAULT_MAX_PATTERN_SUBSCRIPTIONS, ceilings),
    maxSubscriptions: checkInteger('maxSubscriptions', options.maxSubscriptions, DEFAULT_MAX_SUBSCRIPTIONS, MAX_SUBSCRIPTIONS_CAP),
  };
}

/** A queue capacity (the broker's default, or one subscription's own), at most the broker's ceiling. */
export function checkQueueCapacity(option: string, value: number | undefined, fallback: number, ceilings: Readonly<TopicCeilings>): number {
  return checkCeiling('queueCapacity', value, fallback, ceilings, option);
}

function resolveCeilings(ceilings: Partial<TopicCeilings> | undefined): Readonly<TopicCeilings> {
  if (ceilings === undefined) return TOPIC_SEED_CEILINGS;
  if (ceilings === null || typeof ceilings !== 'object') throw new InvalidBusOption('ceilings', 'must be an object');
  const unknown = unknownOptionKey(ceilings, Object.keys(TOPIC_SEED_CEILINGS));
  if (unknown !== undefined) throw new InvalidBusOption(`ceilings.${unknown.key}`, unknown.detail);
  const resolved: TopicCeilings = { ...TOPIC_SEED_CEILINGS };
  for (const key of Object.keys(TOPIC_SEED_CEILINGS) as (keyof TopicCeilings)[]) {
    const value = ceilings[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < TOPIC_SEED_CEILINGS[key] || value > TOPIC_CAPS[key]) {
      throw new InvalidBusOption(`ceilings.${key}`, `must be an integer in ${TOPIC_SEED_CEILINGS[key]}..${TOPIC_CAPS[key]}, got ${String(value)}`);
    }
    resolved[key] = value;
  }
  return resolved;
}

/** An option held to its ceiling; past it, an error naming the ceiling and how to raise it. */
function checkCeiling(key: keyof TopicCeilings, value: number | undefined, fallback: number, ceilings: Readonly<TopicCeilings>, option: string = key): number {
  if (value === undefined) return fallback;
  const ceiling = ceilings[key];
  if (!Number.isInteger(value) || value < 1 || value > ceiling) {
    const raise = ceiling < TOPIC_CAPS[key] ? `; ceilings.${key} raises it, up to ${TOPIC_CAPS[key]}` : '';
    throw new InvalidBusOption(option, `must be an integer in 1..${ceiling} (the ceiling topics.${key}${raise}), got ${String(value)}`);
  }
  return value;
}

function checkInteger(option: string, value: number | undefined, fallback: number, cap: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > cap) {
    throw new InvalidBusOption(option, `must be an integer in 1..${cap}, got ${String(value)}`);
  }
  return value;
}
