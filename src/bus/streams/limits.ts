/**
 * Stream defaults and caps (R7-4), in one place, and the checks that hold options to them. A value
 * past a cap is a StreamCapExceeded naming the cap; a value of the wrong kind a StreamInvalidArgument.
 */
import { StreamCapExceeded, StreamInvalidArgument } from './errors.js';

/** Caps: the largest value any setting or call may ask for. */
export const STREAM_LIMITS = Object.freeze({
  /** Streams one store holds. */
  maxStreams: 1_024,
  /** Consumers one stream holds. */
  maxConsumersPerStream: 256,
  /** Messages one `fetch` may ask for. */
  maxFetchBatch: 1_000,
  /** Deliveries a consumer may hold unacked (its `maxAckPending` setting, at most). */
  maxAckPending: 100_000,
  /** Ack deadline ceiling (12 h). */
  maxAckWaitMs: 12 * 3_600_000,
  /** `maxDeliver` ceiling. */
  maxDeliver: 1_000,
  /** Payload bytes of one message (1 MiB). */
  maxPayloadBytes: 1_048_576,
  /** Header bytes of one message, once encoded. */
  maxHeaderBytes: 16_384,
  /** De-duplication window ceiling (1 h). */
  maxDedupWindowMs: 3_600_000,
  /** Length of a message id used for de-duplication. */
  maxMsgIdLength: 256,
  /** Publishes waiting for their group commit. */
  maxPublishQueue: 65_536,
  /** Acks waiting for their group commit (a queue apart from the publishes'). */
  maxAckQueue: 65_536,
  /** Longest `fetch` wait (5 min). */
  maxFetchWaitMs: 300_000,
  /** Longest `nak` delay (the ack deadline ceiling). */
  maxNakDelayMs: 12 * 3_600_000,
});

/**
 * The seed's retention ceilings (S7-10: 24 h or 1 GiB): a stream may ask for less, never more,
 * unless the store was opened with `retentionCeilings` that say otherwise, by name.
 */
export const STREAM_RETENTION_CEILINGS = Object.freeze({ maxAgeMs: 24 * 3_600_000, maxBytes: 1_073_741_824 });

/** Defaults of a stream's settings. */
export const STREAM_DEFAULTS = Object.freeze({
  /** Messages older than this are evicted (24 h). */
  maxAgeMs: 24 * 3_600_000,
  /** Evicted oldest first beyond this many payload bytes (1 GiB). */
  maxBytes: 1_073_741_824,
  /** Evicted oldest first beyond this many messages (default: 100 million, in practice bytes or age first). */
  maxMsgs: 100_000_000,
  /** Publishes with the same message id within this window are stored once (2 min, like JetStream). */
  dedupWindowMs: 120_000,
});

/** Defaults of a consumer's settings. */
export const CONSUMER_DEFAULTS = Object.freeze({
  /** An unacked delivery is redelivered after this (30 s). */
  ackWaitMs: 30_000,
  /** Deliveries of one message before it is terminated. */
  maxDeliver: 20,
  /** Unacked deliveries a consumer holds at most; fetch hands out no new message beyond. */
  maxAckPending: 1_000,
});

/** Defaults of the store itself. */
export const STREAM_STORE_DEFAULTS = Object.freeze({
  /** Publishes one group commit takes at most. */
  publishBatch: 512,
  /** Rows one retention pass deletes at most per statement. */
  retentionBatch: 1_000,
  /** Between retention passes. */
  retentionIntervalMs: 1_000,
  /** A waiting fetch looks again this often even with no wake-up, for deadlines that expire. */
  pollIntervalMs: 1_000,
});

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

export function checkName(argument: 'stream' | 'consumer', name: unknown): string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new StreamInvalidArgument(argument, 'must be 1-128 letters, digits, _ . or -, not starting with . or -');
  }
  return name;
}

/** An integer setting in [min, cap]; past the cap a StreamCapExceeded naming it. */
export function checkInteger(option: string, value: unknown, fallback: number, min: number, cap: number, capName?: string): number {
  const resolved = value ?? fallback;
  if (typeof resolved !== 'number' || !Number.isSafeInteger(resolved) || resolved < min) {
    throw new StreamInvalidArgument(option, `must be an integer of at least ${min}, got ${String(resolved)}`);
  }
  if (resolved > cap) throw new StreamCapExceeded(capName ?? option, cap, resolved);
  return resolved;
}

export function checkSeq(seq: unknown): number {
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) throw new StreamInvalidArgument('seq', `must be a positive integer, got ${String(seq)}`);
  return seq;
}
