/**
 * Channel names and patterns. A channel is a non-empty string of `:`-separated segments
 * (`orders:42`); a pattern is the same with `*` standing for exactly one whole segment
 * (`orders:*` matches `orders:42`, not `orders` nor `orders:42:x`). `*` inside a segment
 * (`ord*`) is refused rather than read as a glob, so a pattern means one thing only.
 */
import { ChannelTooLong, InvalidChannel } from '../errors.js';

export const SEGMENT_SEPARATOR = ':';
export const WILDCARD = '*';

/** Checks a channel name for publish or an exact subscription. */
export function checkChannel(channel: unknown, maxLength: number): asserts channel is string {
  if (typeof channel !== 'string' || channel.length === 0) throw new InvalidChannel(channel, 'must be a non-empty string');
  if (channel.length > maxLength) throw new ChannelTooLong(channel.length, maxLength);
  // A published channel is matched against patterns: a `*` in it would read as a wildcard to a reader.
  if (channel.includes(WILDCARD)) throw new InvalidChannel(channel, `'${WILDCARD}' is only allowed in patterns`);
}

/** Checks a pattern and returns its segments. */
export function patternSegments(pattern: unknown, maxLength: number): string[] {
  if (typeof pattern !== 'string' || pattern.length === 0) throw new InvalidChannel(pattern, 'must be a non-empty string');
  if (pattern.length > maxLength) throw new ChannelTooLong(pattern.length, maxLength);
  const segments = pattern.split(SEGMENT_SEPARATOR);
  for (const segment of segments) {
    if (segment !== WILDCARD && segment.includes(WILDCARD)) {
      throw new InvalidChannel(pattern, `'${WILDCARD}' must be a whole segment (got '${segment}')`);
    }
  }
  return segments;
}
