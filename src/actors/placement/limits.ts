/** Default cap on one frame crossing a placement boundary (a message, call, reply or signal). */
export const DEFAULT_PAYLOAD_LIMIT_BYTES = 1_048_576;
/** The largest cap a system accepts (`payloadLimitBytes`). */
export const MAX_PAYLOAD_LIMIT_BYTES = 64 * 1_048_576;
/** Bytes before a frame's msgpack body: the creation it is for (or, to a host, from). */
export const FRAME_HEADER_BYTES = 4;
/**
 * Bytes of frames one side of a host channel may have in flight (sent, not yet acknowledged) with
 * the default payload cap; a larger cap raises it to twice the largest frame.
 */
export const DEFAULT_IN_FLIGHT_BYTES = 4 * 1_048_576;

/** The flow-control limits of a host channel for a payload cap. */
export function channelLimits(payloadLimitBytes: number): {
  maxRecordBytes: number;
  budgetBytes: number;
  maxWaitingBytes: number;
} {
  const maxRecordBytes = FRAME_HEADER_BYTES + payloadLimitBytes;
  const budgetBytes = Math.max(DEFAULT_IN_FLIGHT_BYTES, 2 * (maxRecordBytes + 8));
  return { maxRecordBytes, budgetBytes, maxWaitingBytes: 4 * budgetBytes };
}
