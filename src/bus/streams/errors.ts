/**
 * Stream errors. Their codes are registered in `BusErrorCode` (src/bus/errors.ts) and documented in
 * docs/errors.md; nothing a caller handles is distinguished by message.
 */
import { MoloError } from '../../actors/index.js';
import { BusErrorCode } from '../errors.js';

/** No stream of that name in the store. */
export class StreamNotFound extends MoloError {
  static readonly code = BusErrorCode.StreamNotFound;
  constructor(readonly stream: string) {
    super(BusErrorCode.StreamNotFound, `no stream ${JSON.stringify(stream)}`);
  }
}

/** No consumer of that name on the stream. */
export class StreamConsumerNotFound extends MoloError {
  static readonly code = BusErrorCode.StreamConsumerNotFound;
  constructor(
    readonly stream: string,
    readonly consumer: string,
  ) {
    super(BusErrorCode.StreamConsumerNotFound, `no consumer ${JSON.stringify(consumer)} on stream ${JSON.stringify(stream)}`);
  }
}

/** A stream or consumer of that name exists with other settings; `.setting` names the first that differs. */
export class StreamConflict extends MoloError {
  static readonly code = BusErrorCode.StreamConflict;
  constructor(
    readonly what: string,
    readonly setting: string,
  ) {
    super(BusErrorCode.StreamConflict, `${what} exists with another ${setting}`);
  }
}

/**
 * A call went past one of the stream caps; `.cap` names it (`streams.maxStreams`,
 * `streams.maxConsumersPerStream`, `streams.maxFetchBatch`, `streams.maxAckPending`,
 * `streams.maxAckWaitMs`, `streams.maxPayloadBytes`, `streams.maxDedupWindowMs`, ...), `.limit` is
 * the cap and `.actual` what was asked.
 */
export class StreamCapExceeded extends MoloError {
  static readonly code = BusErrorCode.StreamCapExceeded;
  constructor(
    readonly cap: string,
    readonly limit: number,
    readonly actual: number,
  ) {
    super(BusErrorCode.StreamCapExceeded, `${cap} is ${limit}, got ${actual}`);
  }
}

/** An argument of the wrong kind: a bad stream or consumer name, a payload that is neither bytes nor encodable, a bad option. */
export class StreamInvalidArgument extends MoloError {
  static readonly code = BusErrorCode.StreamInvalidArgument;
  constructor(
    readonly argument: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(BusErrorCode.StreamInvalidArgument, `invalid ${argument}: ${detail}`, options);
  }
}

/** `ack`, `nak`, `term` or `inProgress` of a delivery the consumer does not hold: never delivered, or already acked or terminated. */
export class StreamAckUnknown extends MoloError {
  static readonly code = BusErrorCode.StreamAckUnknown;
  constructor(
    readonly stream: string,
    readonly consumer: string,
    readonly seq: number,
  ) {
    super(BusErrorCode.StreamAckUnknown, `consumer ${JSON.stringify(consumer)} on stream ${JSON.stringify(stream)} holds no delivery of sequence ${seq}`);
  }
}

/**
 * A delivery settled (ack, nak, term, inProgress) after its message was redelivered: `attempt` is
 * the stale delivery's count, `current` the one that now holds the message. Refused and counted
 * (`molo_stream_stale_settles_total`), so a worker that lost its delivery cannot settle the next
 * worker's; the fence is the delivery count, as a task lease's is its token.
 */
export class StreamSettleStale extends MoloError {
  static readonly code = BusErrorCode.StreamSettleStale;
  constructor(
    readonly stream: string,
    readonly consumer: string,
    readonly seq: number,
    readonly attempt: number,
    readonly current: number,
  ) {
    super(
      BusErrorCode.StreamSettleStale,
      `delivery ${attempt} of sequence ${seq} (consumer ${JSON.stringify(consumer)}, stream ${JSON.stringify(stream)}) is stale: delivery ${current} holds it now`,
    );
  }
}

/** A call on a stream store after `close()`. */
export class StreamStoreClosed extends MoloError {
  static readonly code = BusErrorCode.StreamStoreClosed;
  constructor() {
    super(BusErrorCode.StreamStoreClosed, 'the stream store is closed');
  }
}
