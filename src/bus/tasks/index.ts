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
export { defineTask, type TaskDefinition, type TaskDefinitionInput, type TaskPayloadCheck } from './define.js';
export { drainQueue, enqueuedTasks, type DrainQueueOptions, type DrainQueueResult, type EnqueuedMatch } from './testing.js';
export { LoopExecutor } from './executors/loop.js';
export { createExecutor } from './executors/index.js';
export { SqlTaskQueue, type SqlTaskQueueOptions } from './sql-queue.js';
export { openSqliteTaskQueue, openTaskQueue, TASKS_DEFAULT_SYNCHRONOUS, type TaskQueueOptions } from './open.js';
export { resolveQueueConfig, TASK_QUEUE_LIMITS, type ResolvedTaskQueueConfig } from './queue-config.js';
export { TaskMetrics, TaskTelemetry, taskMetrics } from './metrics.js';
export { TaskConcurrencyLimit, TaskRateLimit } from './limits-shared.js';
export { TASK_WORKER_DEFAULTS, TASK_WORKER_LIMITS, TaskPoolHandle } from './pool-handle.js';
export { startTaskWorkers, taskPoolsProvider, taskWorkerGroups, taskWorkersChild, TaskWorkerPool } from './workers.js';
export { TASK_POOL_BEHAVIOUR, TaskFetcherServer, TaskSpanName } from './fetcher.js';
export { TASK_WORKER_BEHAVIOUR, TaskWorkerServer, type TaskWorkerCast, type TaskWorkerReport } from './worker.js';
