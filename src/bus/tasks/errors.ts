/** Errors of the task queue; their codes are in the bus registry (`BusErrorCode`). */
import { MoloError } from '../../actors/index.js';
import { BusErrorCode } from '../errors.js';

/** A task event the task lifecycle machine does not allow in the task's state (a bug in the caller, never retried). */
export class IllegalTaskTransition extends MoloError {
  static readonly code = BusErrorCode.IllegalTaskTransition;
  constructor(
    readonly state: string,
    readonly event: string,
  ) {
    super(BusErrorCode.IllegalTaskTransition, `task event ${event} is not allowed in state ${state}`);
  }
}

/** A task envelope (or enqueue input) with a missing or out-of-range field; `field` names it (and so its cap). */
export class InvalidTaskEnvelope extends MoloError {
  static readonly code = BusErrorCode.InvalidTaskEnvelope;
  constructor(
    readonly field: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(BusErrorCode.InvalidTaskEnvelope, `invalid task ${field}: ${detail}`, options);
  }
}

/** A payload whose JSON is larger than `maxPayloadBytes` (default and cap 1 MiB). */
export class TaskPayloadTooLarge extends MoloError {
  static readonly code = BusErrorCode.TaskPayloadTooLarge;
  constructor(
    readonly sizeBytes: number,
    readonly limitBytes: number,
  ) {
    super(BusErrorCode.TaskPayloadTooLarge, `task payload of ${sizeBytes} bytes exceeds maxPayloadBytes = ${limitBytes}`);
  }
}

/** An enqueue into a queue already holding `maxDepth` tasks (default and cap 100,000). */
export class TaskQueueDepthExceeded extends MoloError {
  static readonly code = BusErrorCode.TaskQueueDepthExceeded;
  constructor(
    readonly queue: string,
    readonly depth: number,
    readonly limit: number,
  ) {
    super(BusErrorCode.TaskQueueDepthExceeded, `queue '${queue}' holds ${depth} tasks (maxDepth = ${limit})`);
  }
}

/** A handler still running at its hard timeout: its host was recycled and the run counts as a failure. */
export class TaskHardTimeout extends MoloError {
  static readonly code = BusErrorCode.TaskHardTimeout;
  constructor(
    readonly taskId: string,
    readonly timeoutMs: number,
  ) {
    super(BusErrorCode.TaskHardTimeout, `task ${taskId} still ran at its hard timeout (timeout_hard_ms = ${timeoutMs})`);
  }
}

/** A handler threw something that is not an Error; `thrown` describes it. */
export class TaskHandlerFailed extends MoloError {
  static readonly code = BusErrorCode.TaskHandlerFailed;
  constructor(
    readonly taskName: string,
    readonly thrown: string,
  ) {
    super(BusErrorCode.TaskHandlerFailed, `task handler '${taskName}' threw a non-Error: ${thrown}`);
  }
}

/** No handler of this name in the worker's handlers. */
export class UnknownTaskHandler extends MoloError {
  static readonly code = BusErrorCode.UnknownTaskHandler;
  constructor(readonly taskName: string) {
    super(BusErrorCode.UnknownTaskHandler, `no task handler named '${taskName}'`);
  }
}

/** Thrown by a handler to say no retry will help: the task goes straight to the dead-letter queue. */
export class PermanentTaskFailure extends MoloError {
  static readonly code = BusErrorCode.PermanentTaskFailure;
  constructor(message: string, options?: { cause?: unknown }) {
    super(BusErrorCode.PermanentTaskFailure, message, options);
  }
}

/** No task with this id in the queue (or it was swept after its retention). */
export class TaskNotFound extends MoloError {
  static readonly code = BusErrorCode.TaskNotFound;
  constructor(readonly taskId: string) {
    super(BusErrorCode.TaskNotFound, `no task with id ${JSON.stringify(taskId)}`);
  }
}

/** A call named a queue that was never created (`createQueue`). */
export class TaskQueueNotFound extends MoloError {
  static readonly code = BusErrorCode.TaskQueueNotFound;
  constructor(
    readonly queue: string,
    /** The existing queue whose name is nearest, when one is close enough to be a typo. */
    readonly nearest?: string,
  ) {
    super(BusErrorCode.TaskQueueNotFound, `no task queue named ${JSON.stringify(queue)}${nearest === undefined ? '' : `; did you mean ${JSON.stringify(nearest)}?`}`);
  }
}

/** A call on a task queue (or worker pool) after `close()` (or `stop()`). */
export class TaskQueueClosed extends MoloError {
  static readonly code = BusErrorCode.TaskQueueClosed;
  constructor(what = 'task queue') {
    super(BusErrorCode.TaskQueueClosed, `the ${what} is closed`);
  }
}

/** An operation the task's current state does not allow (cancel a succeeded task, retry a queued one). */
export class TaskStateConflict extends MoloError {
  static readonly code = BusErrorCode.TaskStateConflict;
  constructor(
    readonly taskId: string,
    readonly state: string,
    readonly operation: string,
  ) {
    super(BusErrorCode.TaskStateConflict, `cannot ${operation} task ${taskId}: it is ${state}`);
  }
}
