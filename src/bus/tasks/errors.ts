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
