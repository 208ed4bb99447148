/**
 * Stream errors. Their codes are registered in `BusErrorCode` (src/bus/errors.ts) and documented in
 * docs/errors.md; nothing a caller handles is distinguished by message.
 */
import { codedError } from '../../actors/coded-error.js';
import { BusErrorCode } from '../errors.js';

/** No stream of that name in the store. */
export class StreamNotFound extends codedError(BusErrorCode.StreamNotFound, (stream: string) => ({
  message: `no stream ${JSON.stringify(stream)}`,
  fields: { stream },
})) {}

/** No consumer of that name on the stream. */
export class StreamConsumerNotFound extends codedError(BusErrorCode.StreamConsumerNotFound, (stream: string, consumer: string) => ({
  message: `no consumer ${JSON.stringify(consumer)} on stream ${JSON.stringify(stream)}`,
  fields: { stream, consumer },
})) {}

/** A stream or consumer of that name exists with other settings; `.setting` names the first that differs. */
export class StreamConflict extends codedError(BusErrorCode.StreamConflict, (what: string, setting: string) => ({
  message: `${what} exists with another ${setting}`,
  fields: { what, setting },
})) {}

/**
 * A call went past one of the stream caps; `.cap` names it (`streams.maxStreams`,
 * `streams.maxConsumersPerStream`, `streams.maxFetchBatch`, `streams.maxAckPending`,
 * `streams.maxAckWaitMs`, `streams.maxPayloadBytes`, `streams.maxDedupWindowMs`, ...), `.limit` is
 * the cap and `.actual` what was asked.
 */
export class StreamCapExceeded extends codedError(BusErrorCode.StreamCapExceeded, (cap: string, limit: number, actual: number) => ({
  message: `${cap} is ${limit}, got ${actual}`,
  fields: { cap, limit, actual },
})) {}

/** An argument of the wrong kind: a bad stream or consumer name, a payload that is neither bytes nor encodable, a bad option. */
export class StreamInvalidArgument extends codedError(BusErrorCode.StreamInvalidArgument, (argument: string, detail: string, options?: { cause?: unknown }) => ({
  message: `invalid ${argument}: ${detail}`,
  fields: { argument },
  options,
})) {}

/** `ack`, `nak`, `term` or `inProgress` of a delivery the consumer does not hold: never delivered, or already acked or terminated. */
export class StreamAckUnknown extends codedError(BusErrorCode.StreamAckUnknown, (stream: string, consumer: string, seq: number) => ({
  message: `consumer ${JSON.stringify(consumer)} on stream ${JSON.stringify(stream)} holds no delivery of sequence ${seq}`,
  fields: { stream, consumer, seq },
})) {}

/**
 * A delivery settled (ack, nak, term, inProgress) after its message was redelivered: `attempt` is
 * the stale delivery's count, `current` the one that now holds the message. Refused and counted
 * (`molo_stream_stale_settles_total`), so a worker that lost its delivery cannot settle the next
 * worker's; the fence is the delivery count, as a task lease's is its token.
 */
export class StreamSettleStale extends codedError(BusErrorCode.StreamSettleStale, (stream: string, consumer: string, seq: number, attempt: number, current: number) => ({
  message: `delivery ${attempt} of sequence ${seq} (consumer ${JSON.stringify(consumer)}, stream ${JSON.stringify(stream)}) is stale: delivery ${current} holds it now`,
  fields: { stream, consumer, seq, attempt, current },
})) {}

/** A call on a stream store after `close()`. */
export class StreamStoreClosed extends codedError(BusErrorCode.StreamStoreClosed, () => 'the stream store is closed') {}
