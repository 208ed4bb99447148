/**
 * Running one handler, as every executor does it (on the loop or inside a host): look it up by the
 * task's name, give it a signal aborted at the soft timeout or when `signal` aborts, and turn a
 * thrown non-Error into TaskHandlerFailed. The hard timeout is the executor's own business.
 */
import type { TaskEnvelope } from '../envelope.js';
import type { TaskHandler, TaskHandlers } from '../api.js';
import { TaskHandlerFailed, UnknownTaskHandler } from '../errors.js';

/** The handler named `name`, only an own property (never `toString` or `__proto__`). */
export function findHandler(handlers: TaskHandlers, name: string): TaskHandler {
  const handler = Object.hasOwn(handlers, name) ? handlers[name] : undefined;
  if (typeof handler !== 'function') throw new UnknownTaskHandler(name);
  return handler;
}

/** Runs the handler; resolves when it settles, rejects with what it threw (an Error). */
export async function runHandler(handler: TaskHandler, task: TaskEnvelope, signal: AbortSignal): Promise<void> {
  const controller = new AbortController();
  const abort = (): void => controller.abort(signal.reason);
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  const soft = setTimeout(() => controller.abort(new Error(`soft timeout after ${task.timeout_soft_ms} ms`)), task.timeout_soft_ms);
  try {
    await handler(task.payload, { task, signal: controller.signal });
  } catch (error) {
    if (error instanceof Error) throw error;
    throw new TaskHandlerFailed(task.name, describeThrown(error));
  } finally {
    clearTimeout(soft);
    signal.removeEventListener('abort', abort);
  }
}

/** A thrown non-Error as text, at most 200 characters. */
export function describeThrown(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
