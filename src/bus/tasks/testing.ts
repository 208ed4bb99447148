/**
 * Testing helpers in the spirit of Oban.Testing: run a queue's tasks to completion inline, with
 * the test's handlers and without a pool, moving a SimulatedClock over delays and retry backoffs;
 * and find what was enqueued. They go through the queue's public API only, so what they show is
 * what a pool would have done (leases, retries, dead letters, stored results).
 */
import type { SimulatedClock } from '../../actors/index.js';
import { InvalidBusOption, refuseUnknownBusOptions } from '../errors.js';
import type { TaskHandlers, TaskQueue, TaskRecord, TaskSettlement } from './api.js';
import type { JsonValue } from './envelope.js';
import { LoopExecutor } from './executors/loop.js';
import { outcomeOf } from './pool-batches.js';

export interface DrainQueueOptions {
  /**
   * The queue's own clock (`openTaskQueue(db, { clock })`): when the queue has nothing ready, the
   * clock is moved to the next delayed task or retry and the drain goes on (Oban's
   * `with_scheduled`). Without it, only what is ready now runs.
   */
  readonly clock?: SimulatedClock;
  /** Runs at most (default 1,000, at most 100,000): a handler that keeps enqueuing ends the drain here. */
  readonly maxRuns?: number;
  /** Tasks leased at once (default 100, at most 1,000). */
  readonly batch?: number;
}

export interface DrainQueueResult {
  readonly runs: number;
  readonly succeeded: number;
  /** Runs that failed (each retry counts). */
  readonly failed: number;
  /** Tasks that reached the dead-letter queue during the drain. */
  readonly deadLettered: number;
  /** True when `maxRuns` ended the drain with tasks still to run. */
  readonly truncated: boolean;
}

const DRAIN_KEYS = ['clock', 'maxRuns', 'batch'] as const;
const WAITING = ['queued', 'failed-retryable'] as const;

function bounded(option: string, value: number | undefined, fallback: number, max: number): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < 1 || n > max) throw new InvalidBusOption(`drainQueue.${option}`, `must be an integer in 1..${max}`);
  return n;
}

/** Runs the queue's tasks with `handlers` on the caller's loop until none is left to run (or `maxRuns`). */
export async function drainQueue(queue: TaskQueue, queueName: string, handlers: TaskHandlers, options: DrainQueueOptions = {}): Promise<DrainQueueResult> {
  refuseUnknownBusOptions('drainQueue', options, DRAIN_KEYS);
  const maxRuns = bounded('maxRuns', options.maxRuns, 1_000, 100_000);
  const batch = bounded('batch', options.batch, 100, 1_000);
  const executor = new LoopExecutor(handlers);
  const deadLettersBefore = (await queue.queueInfo(queueName)).deadLetters;
  let runs = 0;
  let succeeded = 0;
  let failed = 0;
  for (;;) {
    const leased = await queue.lease(queueName, Math.min(batch, maxRuns - runs));
    if (leased.length === 0) {
      if (options.clock === undefined || !(await advanceToNext(queue, queueName, options.clock))) break;
      continue;
    }
    const settlements: TaskSettlement[] = [];
    for (const task of leased) {
      const started = performance.now();
      const signal = new AbortController().signal;
      let report: Parameters<typeof outcomeOf>[0];
      try {
        report = { ok: true, result: await executor.run(task.envelope, signal), elapsedMs: performance.now() - started };
      } catch (error) {
        report = { ok: false, error, elapsedMs: performance.now() - started };
      }
      const outcome = outcomeOf(report, task);
      if (outcome.kind === 'succeeded') succeeded++;
      else failed++;
      settlements.push({ id: task.envelope.id, leaseToken: task.leaseToken, outcome });
    }
    await queue.settle(queueName, settlements);
    runs += leased.length;
    if (runs >= maxRuns) break;
  }
  const info = await queue.queueInfo(queueName);
  const truncated = runs >= maxRuns && info.counts.queued + info.counts['failed-retryable'] > 0;
  return { runs, succeeded, failed, deadLettered: info.deadLetters - deadLettersBefore, truncated };
}

/** Moves the clock to the earliest waiting task's start; false when nothing waits. */
async function advanceToNext(queue: TaskQueue, queueName: string, clock: SimulatedClock): Promise<boolean> {
  let earliest = Number.POSITIVE_INFINITY;
  for (const state of WAITING) {
    for (const task of await waiting(queue, queueName, state)) earliest = Math.min(earliest, task.runAfter);
  }
  if (earliest === Number.POSITIVE_INFINITY) return false;
  clock.advance(Math.max(0, earliest - Math.floor(clock.wallNow())) + 1);
  return true;
}

/** Every task in `state`, page by page. */
async function waiting(queue: TaskQueue, queueName: string, state: TaskRecord['state']): Promise<TaskRecord[]> {
  const all: TaskRecord[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await queue.list(queueName, { state, limit: 1_000, ...(after === undefined ? {} : { after }) });
    all.push(...page);
    if (page.length < 1_000) return all;
    after = page.at(-1)!.envelope.id;
  }
}

export interface EnqueuedMatch {
  readonly name?: string;
  /** Matches a payload that holds these fields (deeply; arrays element by element), as Oban's `assert_enqueued args:`. */
  readonly payload?: JsonValue;
}

/** The tasks waiting to run (queued or awaiting a retry) that match, in enqueue order. */
export async function enqueuedTasks(queue: TaskQueue, queueName: string, match: EnqueuedMatch = {}): Promise<TaskRecord[]> {
  refuseUnknownBusOptions('enqueuedTasks', match, ['name', 'payload']);
  const found: TaskRecord[] = [];
  for (const state of WAITING) found.push(...(await waiting(queue, queueName, state)));
  return found
    .filter((task) => (match.name === undefined || task.envelope.name === match.name) && (match.payload === undefined || contains(task.envelope.payload, match.payload)))
    .sort((a, b) => (a.envelope.id < b.envelope.id ? -1 : 1));
}

function contains(actual: JsonValue, expected: JsonValue): boolean {
  if (expected === null || typeof expected !== 'object') return actual === expected;
  if (actual === null || typeof actual !== 'object') return false;
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((item, i) => contains((actual as JsonValue[])[i]!, item));
  if (Array.isArray(actual)) return false;
  const fields = actual as { readonly [key: string]: JsonValue };
  return Object.entries(expected).every(([key, value]) => Object.hasOwn(fields, key) && contains(fields[key]!, value));
}
