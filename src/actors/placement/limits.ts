/** Default cap on one frame crossing a placement boundary (a message, call, reply or signal). */
export const DEFAULT_PAYLOAD_LIMIT_BYTES = 1_048_576;
/** The largest cap a system accepts (`payloadLimitBytes`). */
export const MAX_PAYLOAD_LIMIT_BYTES = 64 * 1_048_576;
