/**
 * The task queue's caps, in a module of their own with no imports: a thread or process host
 * needs them to run a handler (result and progress sizes) and must not load the envelope's
 * dependencies (id generation, the actors index) to get them.
 */
export const TASK_CAPS = Object.freeze({
  /** UTF-8 bytes of a payload's JSON (S7-10). */
  maxPayloadBytes: 1024 * 1024,
  /** Envelopes one queue holds (S7-10). */
  maxQueueDepth: 100_000,
  maxRetries: 100,
  maxTimeoutMs: 24 * 60 * 60 * 1_000,
  maxNameLength: 255,
  maxIdempotencyKeyLength: 255,
  /** Characters of a handler's return value as JSON, stored with the task (a larger output belongs in storage of its own). */
  maxResultChars: 64 * 1024,
  /** Characters of a progress value as JSON. */
  maxProgressChars: 4 * 1024,
});
