/**
 * Running one handler, as every executor does it (on the loop or inside a host): look it up by the
 * task's name, give it a signal aborted at the soft timeout or when `signal` aborts, and turn a
 * thrown non-Error into TaskHandlerFailed. The hard timeout is the executor's own business.
 */
import type { TaskContext, TaskHandler, TaskHandlers } from '../api.js';
import { TASK_CAPS } from '../caps.js';
import type { JsonValue, TaskEnvelope } from '../envelope.js';
import { TaskHandlerFailed, TaskResultInvalid, UnknownTaskHandler } from '../errors.js';

/** The handler named `name`, only an own property (never `toString` or `__proto__`). */
export function findHandler(handlers: TaskHandlers, name: string): TaskHandler {
  const handler = Object.hasOwn(handlers, name) ? handlers[name] : undefined;
  if (typeof handler !== 'function') throw new UnknownTaskHandler(name);
  return handler;
}

/**
 * Runs the handler; resolves when it settles, rejects with what it threw (an Error).
 *
 * The handler's signal is made on its first read: most handlers never read it, and an
 * AbortController, its listener on `signal` and a soft-timeout timer per run were the largest
 * per-task cost on the loop. Made late, it is aborted at once when its cause already happened
 * (`signal` aborted, or the soft timeout passed), else when it happens.
 */
export async function runHandler(handler: TaskHandler, task: TaskEnvelope, signal: AbortSignal, progress?: ProgressSink): Promise<string | undefined> {
  const lazy = new LazySignal(signal, task.timeout_soft_ms);
  let value: unknown;
  try {
    value = await handler(task.payload, lazy.context(task, progress));
  } catch (error) {
    if (error instanceof Error) throw error;
    throw new TaskHandlerFailed(task.name, describeThrown(error));
  } finally {
    lazy.dispose();
  }
  return value === undefined ? undefined : storedJson(task.name, 'result', value, TASK_CAPS.maxResultChars);
}

/** Where a run's progress values go, as JSON text (the latest one wins). */
export type ProgressSink = (json: string) => void;

/** `value` as JSON for the task's row, within `maxChars`; TaskResultInvalid otherwise. */
export function storedJson(taskName: string, what: 'result' | 'progress', value: unknown, maxChars: number): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new TaskResultInvalid(taskName, `its ${what} is not JSON (${(error as Error).message})`);
  }
  // A function or a symbol has no JSON: stored as null, as JSON.stringify does inside an object.
  json ??= 'null';
  const cap = what === 'result' ? 'tasks.maxResultChars' : 'tasks.maxProgressChars';
  if (json.length > maxChars) throw new TaskResultInvalid(taskName, `its ${what} is ${json.length} characters of JSON, over ${cap} (${maxChars})`);
  return json;
}

/** The handler's signal, aborted when `parent` aborts or `softMs` have passed; made on first read. */
class LazySignal {
  readonly #started = performance.now();
  #controller: AbortController | undefined;
  #soft: NodeJS.Timeout | undefined;
  readonly #abort = (): void => this.#controller!.abort(this.parent.reason);

  constructor(
    private readonly parent: AbortSignal,
    private readonly softMs: number,
  ) {}

  context(task: TaskEnvelope, sink: ProgressSink | undefined): TaskContext {
    const self = this;
    return {
      task,
      progress(value: JsonValue): void {
        const json = storedJson(task.name, 'progress', value, TASK_CAPS.maxProgressChars);
        sink?.(json);
      },
      get signal(): AbortSignal {
        return self.#signal();
      },
    };
  }

  #signal(): AbortSignal {
    if (this.#controller !== undefined) return this.#controller.signal;
    const controller = (this.#controller = new AbortController());
    const softAbort = (): void => controller.abort(new Error(`soft timeout after ${this.softMs} ms`));
    const left = this.softMs - (performance.now() - this.#started);
    if (this.parent.aborted) this.#abort();
    else if (left <= 0) softAbort();
    else {
      this.parent.addEventListener('abort', this.#abort, { once: true });
      this.#soft = setTimeout(softAbort, left);
    }
    return controller.signal;
  }

  dispose(): void {
    if (this.#controller === undefined) return;
    clearTimeout(this.#soft);
    this.parent.removeEventListener('abort', this.#abort);
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
