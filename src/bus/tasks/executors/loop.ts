/**
 * The `loop` executor: handlers run on the caller's event loop. An explicit opt-in (R7-5) for
 * handlers that only wait on I/O. The loop cannot be recycled, so at the hard timeout the run is
 * abandoned (its promise is left to settle unobserved) and reported as TaskHardTimeout.
 */
import type { TaskEnvelope } from '../envelope.js';
import type { TaskExecutor, TaskHandlers } from '../api.js';
import { TaskHardTimeout } from '../errors.js';
import { findHandler, runHandler, type ProgressSink } from './run-handler.js';

export class LoopExecutor implements TaskExecutor {
  readonly placement = 'loop' as const;

  constructor(private readonly handlers: TaskHandlers) {}

  async run(task: TaskEnvelope, signal: AbortSignal, progress?: ProgressSink): Promise<string | undefined> {
    const handler = findHandler(this.handlers, task.name);
    let hard: NodeJS.Timeout | undefined;
    try {
      // Started on a later microtask, as before: a handler never runs inside its caller's stack.
      const run = Promise.resolve().then(() => runHandler(handler, task, signal, progress));
      const deadline = new Promise<never>((_, reject) => {
        hard = setTimeout(() => reject(new TaskHardTimeout(task.id, task.timeout_hard_ms)), task.timeout_hard_ms);
      });
      run.catch(() => undefined);
      return await Promise.race([run, deadline]);
    } finally {
      clearTimeout(hard);
    }
  }

  async ready(): Promise<readonly string[]> {
    return Object.keys(this.handlers);
  }

  async close(): Promise<void> {}
}
