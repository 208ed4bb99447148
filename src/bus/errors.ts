/**
 * Error registry of the bus (topics now; streams, tasks and the scheduler later). Stable codes,
 * never reused; documented in docs/errors.md. Topic codes start with `TOPIC_`, stream codes with
 * `STREAM_` (their classes live in streams/errors.ts), lease codes with `LEASE_`, task codes with
 * `TASK_`, scheduler codes with `SCHEDULE_`, codes every part of the bus shares with `BUS_`.
 */
import { codedError, optionError } from '../actors/coded-error.js';
import { unknownOptionKey } from '../actors/option-keys.js';

export const BusErrorCode = {
  InvalidOption: 'BUS_INVALID_OPTION',
  // Leases, tasks and the scheduler (their classes live in leases/, tasks/, scheduler/).
  StaleFencingToken: 'LEASE_STALE_FENCING_TOKEN',
  IllegalTaskTransition: 'TASK_ILLEGAL_TRANSITION',
  InvalidTaskEnvelope: 'TASK_INVALID_ENVELOPE',
  TaskPayloadTooLarge: 'TASK_PAYLOAD_TOO_LARGE',
  TaskQueueDepthExceeded: 'TASK_QUEUE_DEPTH_EXCEEDED',
  TaskNotFound: 'TASK_NOT_FOUND',
  TaskQueueNotFound: 'TASK_QUEUE_NOT_FOUND',
  TaskQueueClosed: 'TASK_QUEUE_CLOSED',
  TaskStateConflict: 'TASK_STATE_CONFLICT',
  TaskHardTimeout: 'TASK_HARD_TIMEOUT',
  TaskHandlerFailed: 'TASK_HANDLER_FAILED',
  UnknownTaskHandler: 'TASK_HANDLER_NOT_FOUND',
  PermanentTaskFailure: 'TASK_PERMANENT_FAILURE',
  TaskResultInvalid: 'TASK_RESULT_INVALID',
  TaskPayloadInvalid: 'TASK_PAYLOAD_INVALID',
  ScheduleNotFound: 'SCHEDULE_NOT_FOUND',
  SchedulerClosed: 'SCHEDULE_SCHEDULER_CLOSED',
  InvalidSchedule: 'SCHEDULE_INVALID',
  InvalidCronExpression: 'SCHEDULE_INVALID_CRON',
  IntervalTooShort: 'SCHEDULE_INTERVAL_TOO_SHORT',
  ScheduleExists: 'SCHEDULE_EXISTS',
  ScheduleLimit: 'SCHEDULE_LIMIT',
  SchedulerQueueMismatch: 'SCHEDULE_QUEUE_DATABASE_MISMATCH',
  InvalidChannel: 'TOPIC_INVALID_CHANNEL',
  ChannelTooLong: 'TOPIC_CHANNEL_TOO_LONG',
  PayloadTooLarge: 'TOPIC_PAYLOAD_TOO_LARGE',
  InvalidPayload: 'TOPIC_INVALID_PAYLOAD',
  DecodeFailed: 'TOPIC_DECODE_FAILED',
  PatternLimit: 'TOPIC_PATTERN_LIMIT',
  SubscriptionLimit: 'TOPIC_SUBSCRIPTION_LIMIT',
  BrokerClosed: 'TOPIC_BROKER_CLOSED',
  StreamNotFound: 'STREAM_NOT_FOUND',
  StreamConsumerNotFound: 'STREAM_CONSUMER_NOT_FOUND',
  StreamConflict: 'STREAM_CONFLICT',
  StreamCapExceeded: 'STREAM_CAP_EXCEEDED',
  StreamInvalidArgument: 'STREAM_INVALID_ARGUMENT',
  StreamAckUnknown: 'STREAM_ACK_UNKNOWN',
  StreamSettleStale: 'STREAM_SETTLE_STALE',
  StreamStoreClosed: 'STREAM_STORE_CLOSED',
} as const;
export type BusErrorCode = (typeof BusErrorCode)[keyof typeof BusErrorCode];

/** An option is missing or outside its range; `option` names the setting (and so the cap). */
export class InvalidBusOption extends optionError(BusErrorCode.InvalidOption, 'option') {}

/** Not a usable channel name or pattern: empty, not a string, `*` in a channel, or `*` inside a segment. */
export class InvalidChannel extends codedError(BusErrorCode.InvalidChannel, (channel: unknown, detail: string) => ({
  message: `invalid channel ${describe(channel)}: ${detail}`,
  fields: { channel },
})) {}

/** A channel name or pattern longer than `maxChannelLength` (default 256 characters). */
export class ChannelTooLong extends codedError(BusErrorCode.ChannelTooLong, (length: number, limit: number) => ({
  message: `channel of ${length} characters exceeds maxChannelLength = ${limit}`,
  fields: { length, limit },
})) {}

/** A payload larger than `maxPayloadBytes` (default 1 MiB). */
export class TopicPayloadTooLarge extends codedError(BusErrorCode.PayloadTooLarge, (sizeBytes: number, limitBytes: number) => ({
  message: `payload of ${sizeBytes} bytes exceeds maxPayloadBytes = ${limitBytes}`,
  fields: { sizeBytes, limitBytes },
})) {}

/** A payload that is not bytes, a bad content type, or a value `publishJson` cannot encode. */
export class InvalidTopicPayload extends codedError(BusErrorCode.InvalidPayload, (detail: string, options?: { cause?: unknown }) => ({
  message: `invalid payload: ${detail}`,
  options,
})) {}

/** `message.text()` on a payload that is not UTF-8, or `message.json()` on one that is not UTF-8 JSON. */
export class TopicDecodeFailed extends codedError(BusErrorCode.DecodeFailed, (channel: string, options?: { cause?: unknown }) => ({
  message: `payload on channel ${describe(channel)} cannot be decoded (not UTF-8, or not JSON)`,
  fields: { channel },
  options,
})) {}

/** The broker already holds `maxPatternSubscriptions` pattern subscriptions (default 1,024). */
export class PatternLimitReached extends codedError(BusErrorCode.PatternLimit, (limit: number) => ({
  message: `cannot subscribe: ${limit} pattern subscriptions exist (maxPatternSubscriptions = ${limit})`,
  fields: { limit },
})) {}

/** The broker already holds `maxSubscriptions` subscriptions of any kind (default 65,536). */
export class SubscriptionLimitReached extends codedError(BusErrorCode.SubscriptionLimit, (limit: number) => ({
  message: `cannot subscribe: ${limit} subscriptions exist (maxSubscriptions = ${limit})`,
  fields: { limit },
})) {}

/** `publish` or `subscribe` on a broker after `close()`. */
export class BrokerClosed extends codedError(BusErrorCode.BrokerClosed, (broker: string) => ({
  message: `broker '${broker}' is closed`,
  fields: { broker },
})) {}

/** Channel names in messages: quoted and cut short, since they may come from anywhere. */
function describe(channel: unknown): string {
  if (typeof channel !== 'string') return `(${channel === null ? 'null' : typeof channel})`;
  return JSON.stringify(channel.length > 64 ? `${channel.slice(0, 64)}…` : channel);
}

/** A bus options object has only `known` keys: InvalidBusOption naming the first other (`<scope>.<key>`), with the nearest known one. */
export function refuseUnknownBusOptions(scope: string, options: object, known: readonly string[]): void {
  const unknown = unknownOptionKey(options, known);
  if (unknown !== undefined) throw new InvalidBusOption(`${scope}.${unknown.key}`, unknown.detail);
}
