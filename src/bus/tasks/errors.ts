/** Errors of the task queue; their codes are in the bus registry (`BusErrorCode`). */
import { codedError } from '../../actors/coded-error.js';
import { BusErrorCode } from '../errors.js';

/** A task event the task lifecycle machine does not allow in the task's state (a bug in the caller, never retried). */
export class IllegalTaskTransition extends codedError(BusErrorCode.IllegalTaskTransition, (state: string, event: string) => ({
  message: `task event ${event} is not allowed in state ${state}`,
  fields: { state, event },
})) {}

/** A task envelope (or enqueue input) with a missing or out-of-range field; `field` names it (and so its cap). */
export class InvalidTaskEnvelope extends codedError(BusErrorCode.InvalidTaskEnvelope, (field: string, detail: string, options?: { cause?: unknown }) => ({
  message: `invalid task ${field}: ${detail}`,
  fields: { field },
  options,
})) {}

/** A payload whose JSON is larger than `maxPayloadBytes` (default and cap 1 MiB). */
export class TaskPayloadTooLarge extends codedError(BusErrorCode.TaskPayloadTooLarge, (sizeBytes: number, limitBytes: number) => ({
  message: `task payload of ${sizeBytes} bytes exceeds maxPayloadBytes = ${limitBytes}`,
  fields: { sizeBytes, limitBytes },
})) {}

/** An enqueue into a queue already holding `maxDepth` tasks (default and cap 100,000). */
export class TaskQueueDepthExceeded extends codedError(BusErrorCode.TaskQueueDepthExceeded, (queue: string, depth: number, limit: number) => ({
  message: `queue '${queue}' holds ${depth} tasks (maxDepth = ${limit})`,
  fields: { queue, depth, limit },
})) {}

/** A handler still running at its hard timeout: its host was recycled and the run counts as a failure. */
export class TaskHardTimeout extends codedError(BusErrorCode.TaskHardTimeout, (taskId: string, timeoutMs: number) => ({
  message: `task ${taskId} still ran at its hard timeout (timeout_hard_ms = ${timeoutMs})`,
  fields: { taskId, timeoutMs },
})) {}

/** A handler threw something that is not an Error; `thrown` describes it. */
export class TaskHandlerFailed extends codedError(BusErrorCode.TaskHandlerFailed, (taskName: string, thrown: string) => ({
  message: `task handler '${taskName}' threw a non-Error: ${thrown}`,
  fields: { taskName, thrown },
})) {}

/** No handler of this name in the worker's handlers. */
export class UnknownTaskHandler extends codedError(BusErrorCode.UnknownTaskHandler, (taskName: string) => ({
  message: `no task handler named '${taskName}'`,
  fields: { taskName },
})) {}

/** Thrown by a handler to say no retry will help: the task goes straight to the dead-letter queue. */
export class PermanentTaskFailure extends codedError(BusErrorCode.PermanentTaskFailure, (message: string, options?: { cause?: unknown }) => ({
  message: message,
  options,
})) {}

/**
 * A handler's return value (or a progress value) that cannot be stored: not JSON (a BigInt, a cycle)
 * or longer than its cap. The run fails permanently: running it again would return the same.
 */
export class TaskResultInvalid extends codedError(BusErrorCode.TaskResultInvalid, (taskName: string, problem: string) => ({
  message: `task handler '${taskName}': ${problem}`,
  fields: { taskName, problem },
})) {}

/**
 * A payload its task definition's check refused (`defineTask`): at enqueue nothing is enqueued; at
 * run time (a task enqueued around the definition) the run fails permanently. `cause` is the check's error.
 */
export class TaskPayloadInvalid extends codedError(BusErrorCode.TaskPayloadInvalid, (taskName: string, problem: string, options?: { cause?: unknown }) => ({
  message: `payload of task '${taskName}' refused by its definition: ${problem}`,
  fields: { taskName, problem },
  options,
})) {}

/** No task with this id in the queue (or it was swept after its retention). */
export class TaskNotFound extends codedError(BusErrorCode.TaskNotFound, (taskId: string) => ({
  message: `no task with id ${JSON.stringify(taskId)}`,
  fields: { taskId },
})) {}

/** A call named a queue that was never created (`createQueue`). */
export class TaskQueueNotFound extends codedError(BusErrorCode.TaskQueueNotFound, (queue: string, nearest?: string) => ({
  message: `no task queue named ${JSON.stringify(queue)}${nearest === undefined ? '' : `; did you mean ${JSON.stringify(nearest)}?`}`,
  // `nearest`: the existing queue whose name is nearest, when one is close enough to be a typo.
  fields: { queue, nearest },
})) {}

/** A call on a task queue (or worker pool) after `close()` (or `stop()`). */
export class TaskQueueClosed extends codedError(BusErrorCode.TaskQueueClosed, (what = 'task queue') => `the ${what} is closed`) {}

/** An operation the task's current state does not allow (cancel a succeeded task, retry a queued one). */
export class TaskStateConflict extends codedError(BusErrorCode.TaskStateConflict, (taskId: string, state: string, operation: string) => ({
  message: `cannot ${operation} task ${taskId}: it is ${state}`,
  fields: { taskId, state, operation },
})) {}
