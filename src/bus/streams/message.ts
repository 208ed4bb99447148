/**
 * Messages as stored and as handed out: payload encoding (bytes as given, any other value as
 * msgpack), header checks, and the message and delivery objects built from rows.
 */
import { pack, unpack } from 'msgpackr';
import type { TraceCarrier } from '../../telemetry/index.js';
import { StreamCapExceeded, StreamInvalidArgument } from './errors.js';
import { STREAM_LIMITS } from './limits.js';
import type { Delivery, StreamHeaders, StreamMessage, StreamPayload } from './store.js';

export const ENCODING_BYTES = 0;
export const ENCODING_MSGPACK = 1;

export interface EncodedMessage {
  readonly payload: Buffer;
  readonly encoding: number;
  /** JSON text of the headers, or null. */
  readonly headers: string | null;
}

export function encodeMessage(payload: StreamPayload, headers: StreamHeaders | undefined, maxPayloadBytes: number): EncodedMessage {
  let bytes: Buffer;
  let encoding: number;
  if (payload instanceof Uint8Array) {
    bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    encoding = ENCODING_BYTES;
  } else {
    if (payload === undefined) throw new StreamInvalidArgument('payload', 'undefined is not a payload');
    try {
      bytes = pack(payload);
    } catch (error) {
      throw new StreamInvalidArgument('payload', 'msgpack cannot encode it', { cause: error });
    }
    encoding = ENCODING_MSGPACK;
  }
  if (bytes.byteLength > maxPayloadBytes) throw new StreamCapExceeded('streams.maxPayloadBytes', maxPayloadBytes, bytes.byteLength);
  return { payload: bytes, encoding, headers: encodeHeaders(headers) };
}

/**
 * The message with the publish span's trace context in its headers (`traceparent`, and
 * `tracestate` when there is one), where a consumer's delivery span finds its parent. Left as it
 * was when that would pass the header cap: tracing never fails a publish.
 */
export function withTraceHeaders(message: EncodedMessage, headers: StreamHeaders | undefined, carrier: TraceCarrier | undefined): EncodedMessage {
  if (carrier === undefined) return message;
  const traced: Record<string, string> = { ...headers, traceparent: carrier.traceparent };
  if (carrier.tracestate !== undefined) traced.tracestate = carrier.tracestate;
  else delete traced.tracestate;
  const text = JSON.stringify(traced);
  return Buffer.byteLength(text) > STREAM_LIMITS.maxHeaderBytes ? message : { ...message, headers: text };
}

function encodeHeaders(headers: StreamHeaders | undefined): string | null {
  if (headers === undefined) return null;
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) throw new StreamInvalidArgument('headers', 'must be an object of strings');
  for (const [key, value] of Object.entries(headers)) {
    if (typeof value !== 'string') throw new StreamInvalidArgument('headers', `header ${JSON.stringify(key)} is not a string`);
  }
  const text = JSON.stringify(headers);
  const size = Buffer.byteLength(text);
  if (size > STREAM_LIMITS.maxHeaderBytes) throw new StreamCapExceeded('streams.maxHeaderBytes', STREAM_LIMITS.maxHeaderBytes, size);
  return text;
}

export class StoredMessage implements StreamMessage {
  constructor(
    readonly stream: string,
    readonly seq: number,
    readonly time: number,
    readonly headers: StreamHeaders | undefined,
    readonly payload: Buffer,
    readonly encoding: 'bytes' | 'msgpack',
  ) {}

  value<T = unknown>(): T {
    return (this.encoding === 'msgpack' ? unpack(this.payload) : this.payload) as T;
  }
}

/**
 * What a delivery settles through: the store. Each settle carries the delivery's attempt (its
 * count), and the store refuses it once the message went out again (StreamSettleStale).
 */
export interface Settler {
  ack(stream: string, consumer: string, seq: number, attempt: number): Promise<void>;
  nak(stream: string, consumer: string, seq: number, attempt: number, delayMs?: number): Promise<void>;
  term(stream: string, consumer: string, seq: number, attempt: number): Promise<void>;
  inProgress(stream: string, consumer: string, seq: number, attempt: number): Promise<void>;
}

export class StoredDelivery extends StoredMessage implements Delivery {
  constructor(
    message: StoredMessage,
    readonly consumer: string,
    readonly deliveryCount: number,
    readonly settler: Settler,
  ) {
    super(message.stream, message.seq, message.time, message.headers, message.payload, message.encoding);
  }

  ack(): Promise<void> {
    return this.settler.ack(this.stream, this.consumer, this.seq, this.deliveryCount);
  }

  nak(delayMs?: number): Promise<void> {
    return this.settler.nak(this.stream, this.consumer, this.seq, this.deliveryCount, delayMs);
  }

  term(): Promise<void> {
    return this.settler.term(this.stream, this.consumer, this.seq, this.deliveryCount);
  }

  inProgress(): Promise<void> {
    return this.settler.inProgress(this.stream, this.consumer, this.seq, this.deliveryCount);
  }
}
