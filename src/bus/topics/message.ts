/**
 * What a subscriber receives. One object per publish is shared by every exact subscriber of the
 * channel (and one per matching pattern by that pattern's subscribers), so fan-out allocates
 * nothing per subscriber. The payload is shared too and never copied: treat it as read-only.
 */
import { InvalidTopicPayload, TopicDecodeFailed } from '../errors.js';
import { JSON_CONTENT_TYPE } from './options.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export class TopicMessage {
  /** Discriminant, so an actor can tell topic messages from its other messages. */
  readonly kind: 'topic' = 'topic';

  constructor(
    readonly channel: string,
    readonly payload: Uint8Array,
    /** The publisher's hint (`application/octet-stream` unless it said otherwise). */
    readonly contentType: string,
    /** The pattern subscription this came through; undefined for an exact subscription. */
    readonly pattern: string | undefined,
    /** Wall-clock milliseconds since the epoch, from the broker's clock. */
    readonly publishedAt: number,
  ) {}

  /** The payload decoded as UTF-8. */
  text(): string {
    try {
      return utf8.decode(this.payload);
    } catch (cause) {
      throw new TopicDecodeFailed(this.channel, { cause });
    }
  }

  /** The payload decoded as UTF-8 JSON (whatever the content type says); TopicDecodeFailed if it is not. */
  json<T = unknown>(): T {
    try {
      return JSON.parse(utf8.decode(this.payload)) as T;
    } catch (cause) {
      throw new TopicDecodeFailed(this.channel, { cause });
    }
  }

  /** This message as seen through `pattern`: same channel, payload and time. */
  viaPattern(pattern: string): TopicMessage {
    return new TopicMessage(this.channel, this.payload, this.contentType, pattern, this.publishedAt);
  }
}

/** Narrows anything an actor receives to a topic message. */
export function isTopicMessage(message: unknown): message is TopicMessage {
  return message instanceof TopicMessage;
}

/** `value` as UTF-8 JSON bytes, for `publishJson`. */
export function encodeJson(value: unknown): { payload: Uint8Array; contentType: string } {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (cause) {
    throw new InvalidTopicPayload('value cannot be encoded as JSON', { cause });
  }
  if (text === undefined) throw new InvalidTopicPayload(`a ${typeof value} has no JSON form`);
  return { payload: Buffer.from(text, 'utf8'), contentType: JSON_CONTENT_TYPE };
}
