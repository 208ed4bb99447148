/**
 * The `loop` executor: handlers run on the caller's event loop. An explicit opt-in (R7-5) for
 * handlers that only wait on I/O. The loop cannot be recycled, so at the hard timeout the run is
 * abandoned (its promise is left to settle unobserved) and reported as TaskHardTimeout.
 */
import type { TaskEnvelope } from '../envelope.js';
import type { TaskExecutor, TaskHandlers } from '../api.js';
import { TaskHandlerFailed, TaskHardTimeout, UnknownTaskHandler } from '../errors.js';

export class LoopExecutor implements TaskExecutor {
  readonly placement = 'loop' as const;

  constructor(private readonly handlers: TaskHandlers) {}

  async run(task: TaskEnvelope, signal: AbortSignal): Promise<void> {
    const handler = Object.hasOwn(this.handlers, task.name) ? this.handlers[task.name] : undefined;
    if (handler === undefined) throw new UnknownTaskHandler(task.name);
    const controller = new AbortController();
    const abort = (): void => controller.abort(signal.reason);
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
    const soft = setTimeout(() => controller.abort(new Error(`soft timeout after ${task.timeout_soft_ms} ms`)), task.timeout_soft_ms);
    let hard: NodeJS.Timeout | undefined;
    try {
      const run = Promise.resolve().then(() => handler(task.payload, { task, signal: controller.signal }));
      const deadline = new Promise<never>((_, reject) => {
        hard = setTimeout(() => reject(new TaskHardTimeout(task.id, task.timeout_hard_ms)), task.timeout_hard_ms);
      });
      run.catch(() => undefined);
      await Promise.race([run, deadline]);
    } catch (error) {
      if (error instanceof Error) throw error;
      throw new TaskHandlerFailed(task.name, describeThrown(error));
    } finally {
      clearTimeout(soft);
      clearTimeout(hard);
      signal.removeEventListener('abort', abort);
    }
  }

  async close(): Promise<void> {}
}

function describeThrown(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
