/**
 * Helpers of the pool's fetcher: writes that are coalesced (settlements, markRunning) so a pool
 * pays one statement per batch of finished or started tasks, not one per task; and the mapping of
 * a worker's report to a settlement outcome.
 */
import type { LeasedTask, TaskOutcome } from './api.js';
import { PermanentTaskFailure, TaskHardTimeout, TaskPayloadInvalid, TaskResultInvalid } from './errors.js';
import type { TaskWorkerReport } from './pool-handle.js';
import { describeFailure } from './transitions.js';

/** Items pushed while a write runs go together in the next one; one write at a time. */
export class BatchFlusher<T> {
  #items: T[] = [];
  #running: Promise<void> | undefined;

  constructor(
    private readonly write: (items: T[]) => Promise<unknown>,
    private readonly failed: (error: unknown, items: number) => void,
  ) {}

  push(item: T): void {
    this.#items.push(item);
    if (this.#running === undefined) this.#running = this.#loop();
  }

  async #loop(): Promise<void> {
    // One macrotask first, so that everything finished in this turn joins the write.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.#items.length > 0) {
      const batch = this.#items;
      this.#items = [];
      try {
        await this.write(batch);
      } catch (error) {
        this.failed(error, batch.length);
      }
    }
    this.#running = undefined;
  }

  /** Resolves once nothing is pending or being written. */
  async drain(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }
}

/** A worker's report as a settlement outcome (R7-6 failure reasons). */
export function outcomeOf(report: Pick<Extract<TaskWorkerReport, { kind: 'task-done' }>, 'ok' | 'error' | 'elapsedMs' | 'result'>, task: LeasedTask): TaskOutcome {
  if (report.ok) return report.result === undefined ? { kind: 'succeeded' } : { kind: 'succeeded', result: report.result };
  const error = report.error;
  const detail = describeFailure(error);
  if (error instanceof PermanentTaskFailure || error instanceof TaskResultInvalid || error instanceof TaskPayloadInvalid) return { kind: 'failed', reason: 'permanent', permanent: true, detail };
  if (error instanceof TaskHardTimeout) return { kind: 'failed', reason: 'hard-timeout', detail };
  // The executor aborted the signal at the soft timeout and the handler then failed.
  if (report.elapsedMs >= task.envelope.timeout_soft_ms) return { kind: 'failed', reason: 'soft-timeout', detail };
  return { kind: 'failed', reason: 'error', detail };
}
