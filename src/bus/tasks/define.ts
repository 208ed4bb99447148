/**
 * Typed task definitions: one place that names a task, checks its payload and types its handler
 * and result, so callers never cast. The check runs at enqueue (nothing is enqueued when it
 * refuses) and again before the handler runs, since a task can reach the queue around the
 * definition (an older release, `queue.enqueue` with a raw input).
 *
 * ```ts
 * const resize = defineTask<{ url: string; width: number }, { key: string }>('resize', { is: isResizePayload });
 * await resize.enqueue(queue, 'images', { url, width: 320 });
 * const handlers = { ...resize.handle(async ({ url, width }) => ({ key: await store(url, width) })) };
 * const done = resize.resultOf(await queue.get(id));            // { key: string } | undefined
 * ```
 */
import { InvalidBusOption, refuseUnknownBusOptions } from '../errors.js';
import type { EnqueueResult, TaskContext, TaskEnqueueOptions, TaskHandlers, TaskQueue, TaskRecord } from './api.js';
import { checkName, type JsonValue, type TaskInput } from './envelope.js';
import { TaskPayloadInvalid } from './errors.js';

/** How a definition checks a payload: a parse function (returns the payload or throws, as a schema library's `parse`), or a type guard. */
export type TaskPayloadCheck<P> =
  | { readonly check: (payload: unknown) => P; readonly is?: never }
  | { readonly is: (payload: unknown) => payload is P; readonly check?: never };

/** The input of an enqueue besides its name and payload. */
export type TaskDefinitionInput = Omit<TaskInput, 'name' | 'payload'>;

export interface TaskDefinition<P extends JsonValue, R extends JsonValue | void> {
  readonly name: string;
  /** The payload, checked (TaskPayloadInvalid when the check refuses it). */
  check(payload: unknown): P;
  /** A checked TaskInput, for `enqueue`, `enqueueMany` or a schedule. */
  input(payload: P, input?: TaskDefinitionInput): TaskInput;
  enqueue(queue: TaskQueue, queueName: string, payload: P, input?: TaskDefinitionInput, options?: TaskEnqueueOptions): Promise<EnqueueResult>;
  /** The handlers record entry for this task; spread several into one record. */
  handle(handler: (payload: P, context: TaskContext) => R | Promise<R>): TaskHandlers;
  /** The stored result of a succeeded task of this definition, typed; undefined otherwise. */
  resultOf(record: TaskRecord | undefined): R | undefined;
}

const DEFINITION_KEYS = ['check', 'is'] as const;

export function defineTask<P extends JsonValue, R extends JsonValue | void = void>(name: string, options: TaskPayloadCheck<P>): TaskDefinition<P, R> {
  checkName(name);
  if (options === null || typeof options !== 'object') throw new InvalidBusOption('defineTask', 'options must be an object with `check` or `is`');
  refuseUnknownBusOptions('defineTask', options, DEFINITION_KEYS);
  const { check, is } = options as { check?: (payload: unknown) => P; is?: (payload: unknown) => payload is P };
  if ((check === undefined) === (is === undefined) || typeof (check ?? is) !== 'function') {
    throw new InvalidBusOption('defineTask', 'takes exactly one of `check` (a parse function) or `is` (a type guard)');
  }
  const checked = (payload: unknown): P => {
    if (is !== undefined) {
      if (is(payload)) return payload;
      throw new TaskPayloadInvalid(name, 'its type guard returned false');
    }
    try {
      return check!(payload);
    } catch (error) {
      throw new TaskPayloadInvalid(name, error instanceof Error ? error.message : String(error), { cause: error });
    }
  };
  const input = (payload: P, rest: TaskDefinitionInput = {}): TaskInput => ({ ...rest, name, payload: checked(payload) });
  return {
    name,
    check: checked,
    input,
    enqueue: (queue, queueName, payload, rest, enqueueOptions) => {
      let task: TaskInput;
      try {
        task = input(payload, rest);
      } catch (error) {
        return Promise.reject(error);
      }
      return queue.enqueue(queueName, task, enqueueOptions);
    },
    handle: (handler) => ({ [name]: (payload: JsonValue, context: TaskContext) => handler(checked(payload), context) }),
    resultOf: (record) => (record?.envelope.name === name && record.state === 'succeeded' ? (record.result as R | undefined) : undefined),
  };
}
