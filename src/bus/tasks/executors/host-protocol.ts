/**
 * What the placed executor and its task host say to each other. A task crosses with its payload as
 * JSON text: its size is then the payload's JSON size (what the queue capped), whatever the
 * payload holds, so the host's frame cap can be sized exactly (see TASK_HOST_LIMIT_BYTES).
 */
import type { Ref } from '../../../actors/index.js';
import type { TaskEnvelope } from '../envelope.js';
import { TASK_CAPS } from '../envelope.js';

export interface WireTask {
  readonly task: Omit<TaskEnvelope, 'payload'>;
  readonly payloadJson: string;
}

/** Calls to the host. */
export type HostRequest = { readonly describe: true } | { readonly run: number; readonly work: WireTask; readonly progressTo?: Ref };
/** Plain messages to the host: abort a run's signal (cancel, shutdown). */
export interface HostAbort {
  readonly abort: number;
  readonly reason: string;
}
/** From the host to the run's `progressTo` (the worker): the latest progress of task `id`, as JSON text. */
export interface HostProgress {
  readonly kind: 'task-host-progress';
  readonly id: string;
  readonly json: string;
}

export type DescribeReply = { readonly names: readonly string[] } | { readonly invalid: string };
export type RunReply =
  /** `result`: the handler's return value as JSON text, when it returned one. */
  | { readonly ok: true; readonly result?: string }
  | { readonly ok: false; readonly error: Error }
  /** The handler threw a non-Error, described. */
  | { readonly ok: false; readonly thrown: string };

/**
 * Frame cap of a task host: the largest payload, the rest of its envelope at its caps (name and
 * idempotency key of 255 characters, up to 3 UTF-8 bytes each; ids, dates, numbers and keys), and
 * the frame's own fields, with room to spare.
 */
export const TASK_HOST_LIMIT_BYTES = TASK_CAPS.maxPayloadBytes + 16 * 1024;
