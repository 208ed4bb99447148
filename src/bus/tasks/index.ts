// The task queue: its API, lifecycle table, envelope, retry policy and executors.
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
export type * from './api.js';
export { LoopExecutor } from './executors/loop.js';
export { createExecutor } from './executors/index.js';
export { SqlTaskQueue, type SqlTaskQueueOptions } from './sql-queue.js';
export { openSqliteTaskQueue, openTaskQueue, type TaskQueueOptions } from './open.js';
export { resolveQueueConfig, TASK_QUEUE_LIMITS, type ResolvedTaskQueueConfig } from './queue-config.js';
export { TaskMetrics, TaskTelemetry, taskMetrics } from './metrics.js';
