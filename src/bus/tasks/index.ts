// The task queue's foundations: lifecycle table, envelope, retry policy (the queue itself builds on streams).
export * from './errors.js';
export * from './lifecycle.js';
export {
  TASK_CAPS,
  TASK_DEFAULTS,
  checkPayload,
  checkQueueDepth,
  createEnvelope,
  newTaskId,
  parseEnvelope,
  type EnvelopeOptions,
  type JsonValue,
  type TaskEnvelope,
  type TaskInput,
} from './envelope.js';
export { RETRY_DEFAULTS, resolveRetryPolicy, retryDelay, type ResolvedRetryPolicy, type RetryPolicy } from './retry.js';
