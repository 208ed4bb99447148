/**
 * The task endpoints of the admin surface, registered when the admin is given a TaskQueue. They
 * call the public TaskQueue API only (R7-10). Reads follow the surface's token rule; the mutating
 * ones (enqueue, retry, cancel, redrive, pause, resume, purge, delete) need a configured token, and are refused outright (403
 * ADMIN_TOKEN_REQUIRED) on a surface without one.
 *
 *   GET  /tasks/queues                    every queue with its counts
 *   GET  /tasks/queues/:queue             one queue's counts
 *   GET  /tasks/queues/:queue/tasks       tasks (?state=&limit=&after=)
 *   GET  /tasks/queues/:queue/dlq         dead letters (?limit=&after=)
 *   POST /tasks/queues/:queue/enqueue     { task } or { tasks: [...] }, optional { priority }
 *   POST /tasks/queues/:queue/redrive     { ids? }
 *   POST /tasks/queues/:queue/pause | /resume
 *   POST /tasks/queues/:queue/purge       { deadLetters? }
 *   POST /tasks/queues/:queue/delete      { force? }
 *   GET  /tasks/:id                       one task with its history
 *   POST /tasks/:id/retry | /tasks/:id/cancel
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BusErrorCode } from '../bus/errors.js';
import type { TaskEnqueueOptions, TaskQueue } from '../bus/tasks/api.js';
import type { TaskInput } from '../bus/tasks/envelope.js';
import { TASK_STATES, type TaskState } from '../bus/tasks/lifecycle.js';
import { AdminBadRequest, AdminMethodNotAllowed, AdminNotFound, AdminTokenRequired } from './errors.js';
import { readJsonBody } from './request-body.js';

/** Tasks one enqueue request may carry, and dead-letter ids one redrive may name. */
export const ADMIN_MAX_ENQUEUE_BATCH = 1_000;
export const ADMIN_MAX_REDRIVE_IDS = 10_000;
/** Queues `GET /tasks/queues` describes at most. */
const MAX_LISTED_QUEUES = 1_000;

export type TaskRoute =
  | { readonly kind: 'queues' }
  | { readonly kind: 'queue' | 'list' | 'dlq' | 'enqueue' | 'redrive' | 'pause' | 'resume' | 'purge' | 'delete'; readonly queue: string }
  | { readonly kind: 'task' | 'retry' | 'cancel'; readonly id: string };

const MUTATING: ReadonlySet<TaskRoute['kind']> = new Set(['enqueue', 'redrive', 'retry', 'cancel', 'pause', 'resume', 'purge', 'delete']);

export interface TaskRouteContext {
  readonly queue: TaskQueue;
  readonly host: string;
  readonly hasToken: boolean;
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
}

export type SendJson = (response: ServerResponse, status: number, body: unknown) => void;

/** The route of a `/tasks...` path, or undefined. Throws AdminMethodNotAllowed for a known path and the wrong method. */
export function matchTaskRoute(method: string, path: string): TaskRoute | undefined {
  const parts = path.split('/').slice(1);
  if (parts[0] !== 'tasks' || parts.some((part) => part === '')) return undefined;
  let segments: string[];
  try {
    segments = parts.slice(1).map(decodeURIComponent);
  } catch {
    return undefined;
  }
  const route = routeOf(segments);
  if (route === undefined) return undefined;
  const wanted = MUTATING.has(route.kind) ? 'POST' : 'GET';
  if (method !== wanted) throw new AdminMethodNotAllowed(method, wanted);
  return route;
}

function routeOf(s: string[]): TaskRoute | undefined {
  if (s[0] === 'queues') {
    if (s.length === 1) return { kind: 'queues' };
    const queue = s[1]!;
    if (s.length === 2) return { kind: 'queue', queue };
    if (s.length !== 3) return undefined;
    const kind = ({ tasks: 'list', dlq: 'dlq', enqueue: 'enqueue', redrive: 'redrive', pause: 'pause', resume: 'resume', purge: 'purge', delete: 'delete' } as const)[s[2]!];
    return kind === undefined ? undefined : { kind, queue };
  }
  if (s.length === 1) return { kind: 'task', id: s[0]! };
  if (s.length === 2 && (s[1] === 'retry' || s[1] === 'cancel')) return { kind: s[1], id: s[0]! };
  return undefined;
}

export function isMutating(route: TaskRoute): boolean {
  return MUTATING.has(route.kind);
}

/** Answers one task request; the caller has checked the host, the token and the request cap. */
export async function serveTaskRoute(context: TaskRouteContext, route: TaskRoute, request: IncomingMessage, url: URL, response: ServerResponse, send: SendJson): Promise<void> {
  if (MUTATING.has(route.kind) && !context.hasToken) throw new AdminTokenRequired(context.host, `${request.method} ${url.pathname}`);
  const { queue } = context;
  switch (route.kind) {
    case 'queues': {
      const names = (await queue.queues()).slice(0, MAX_LISTED_QUEUES);
      send(response, 200, { queues: await Promise.all(names.map((name) => queue.queueInfo(name))) });
      return;
    }
    case 'queue':
      send(response, 200, await queue.queueInfo(route.queue));
      return;
    case 'list': {
      const state = stateParam(url);
      const tasks = await queue.list(route.queue, { state, limit: limitParam(url), after: url.searchParams.get('after') ?? undefined });
      send(response, 200, { tasks });
      return;
    }
    case 'dlq':
      send(response, 200, { deadLetters: await queue.deadLetters(route.queue, { limit: limitParam(url), after: url.searchParams.get('after') ?? undefined }) });
      return;
    case 'task': {
      const task = await queue.get(route.id);
      if (task === undefined) {
        send(response, 404, { error: { code: BusErrorCode.TaskNotFound, message: `no task ${route.id}` } });
        return;
      }
      send(response, 200, task);
      return;
    }
    case 'retry':
    case 'cancel': {
      await readJsonBody(request, context.maxBodyBytes, context.bodyTimeoutMs);
      const state = route.kind === 'retry' ? await queue.retry(route.id) : await queue.cancel(route.id);
      send(response, 200, { id: route.id, state });
      return;
    }
    case 'redrive': {
      const body = objectBody(await readJsonBody(request, context.maxBodyBytes, context.bodyTimeoutMs), ['ids']);
      const ids = body.ids === undefined ? undefined : stringList('ids', body.ids, ADMIN_MAX_REDRIVE_IDS);
      send(response, 200, { redriven: await queue.redrive(route.queue, ids) });
      return;
    }
    case 'pause':
    case 'resume': {
      await readJsonBody(request, context.maxBodyBytes, context.bodyTimeoutMs);
      const changed = route.kind === 'pause' ? await queue.pause(route.queue) : await queue.resume(route.queue);
      send(response, 200, { queue: route.queue, paused: route.kind === 'pause', changed });
      return;
    }
    case 'purge': {
      const body = objectBody(await readJsonBody(request, context.maxBodyBytes, context.bodyTimeoutMs), ['deadLetters']);
      send(response, 200, { purged: await queue.purge(route.queue, { deadLetters: flag('deadLetters', body.deadLetters) }) });
      return;
    }
    case 'delete': {
      const body = objectBody(await readJsonBody(request, context.maxBodyBytes, context.bodyTimeoutMs), ['force']);
      send(response, 200, { deleted: await queue.deleteQueue(route.queue, { force: flag('force', body.force) }) });
      return;
    }
    case 'enqueue': {
      const body = objectBody(await readJsonBody(request, context.maxBodyBytes, context.bodyTimeoutMs), ['task', 'tasks', 'priority']);
      const options: TaskEnqueueOptions = body.priority === undefined ? {} : { priority: integer('priority', body.priority) };
      if ((body.task === undefined) === (body.tasks === undefined)) throw new AdminBadRequest('body', 'must have exactly one of task or tasks');
      if (body.task !== undefined) {
        const result = await queue.enqueue(route.queue, taskInput('task', body.task), options);
        send(response, 201, result);
        return;
      }
      if (!Array.isArray(body.tasks) || body.tasks.length === 0 || body.tasks.length > ADMIN_MAX_ENQUEUE_BATCH) {
        throw new AdminBadRequest('tasks', `must be an array of 1..${ADMIN_MAX_ENQUEUE_BATCH} tasks`);
      }
      const inputs = body.tasks.map((task, index) => taskInput(`tasks[${index}]`, task));
      send(response, 201, { results: await queue.enqueueMany(route.queue, inputs, options) });
      return;
    }
    default: {
      const unknown: never = route;
      throw new AdminNotFound(JSON.stringify(unknown));
    }
  }
}

/** HTTP status of the queue's errors. */
export const TASK_ERROR_STATUS: Readonly<Record<string, number>> = {
  [BusErrorCode.TaskNotFound]: 404,
  [BusErrorCode.TaskQueueNotFound]: 404,
  [BusErrorCode.InvalidTaskEnvelope]: 400,
  [BusErrorCode.InvalidOption]: 400,
  [BusErrorCode.TaskPayloadTooLarge]: 413,
  [BusErrorCode.TaskStateConflict]: 409,
  [BusErrorCode.TaskQueueDepthExceeded]: 429,
  [BusErrorCode.TaskQueueClosed]: 503,
};

function stateParam(url: URL): TaskState | undefined {
  const state = url.searchParams.get('state');
  if (state === null) return undefined;
  if (!(TASK_STATES as readonly string[]).includes(state)) throw new AdminBadRequest('state', `must be one of ${TASK_STATES.join(', ')}`);
  return state as TaskState;
}

function limitParam(url: URL): number | undefined {
  const raw = url.searchParams.get('limit');
  if (raw === null) return undefined;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1_000) throw new AdminBadRequest('limit', 'must be an integer in 1..1000');
  return limit;
}

function objectBody(body: unknown, fields: readonly string[]): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new AdminBadRequest('body', 'must be a JSON object');
  for (const key of Object.keys(body)) if (!fields.includes(key)) throw new AdminBadRequest(key, `is not a field here (fields: ${fields.join(', ')})`);
  return body as Record<string, unknown>;
}

function taskInput(field: string, value: unknown): TaskInput {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AdminBadRequest(field, 'must be an object { name, payload?, ... }');
  if (typeof (value as { name?: unknown }).name !== 'string') throw new AdminBadRequest(`${field}.name`, 'must be a string');
  // The queue validates the rest (InvalidTaskEnvelope names the field, answered as 400).
  return value as TaskInput;
}

function integer(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new AdminBadRequest(field, 'must be an integer');
  return value;
}

function stringList(field: string, value: unknown, max: number): string[] {
  if (!Array.isArray(value) || value.length > max || !value.every((item) => typeof item === 'string' && item.length > 0 && item.length <= 64)) {
    throw new AdminBadRequest(field, `must be an array of at most ${max} task ids`);
  }
  return value as string[];
}

function flag(field: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new AdminBadRequest(field, 'must be true or false');
  return value;
}
