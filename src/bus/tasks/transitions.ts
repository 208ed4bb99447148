/**
 * How the SQL queue uses the lifecycle table. The states each statement filters on are derived from
 * {@link TASK_TABLE} (the states where an event is defined), and every row a statement changes has
 * its step computed by {@link nextTaskStep} before anything is reported, so the machine stays the
 * one source of truth: a table change that the SQL does not follow throws IllegalTaskTransition.
 */
import type { TaskFailureReason, TaskHistoryEntry } from './api.js';
import { nextTaskStep, TASK_STATES, TASK_TABLE, type TaskEventType, type TaskState, type TaskStep } from './lifecycle.js';

/** States in which `event` is defined. */
export function statesWith(event: TaskEventType): readonly TaskState[] {
  return TASK_STATES.filter((state) => TASK_TABLE[state][event] !== undefined);
}

/** `('a', 'b')`: a state list for SQL (the names are our own constants, never input). */
/**
 * Postgres: the rows of `t` named by the (id, lease_token) pairs of `v` (unnested from the arrays
 * `$<idsParam>` and the next), if still in the queue (`$1`) and one of `states`. The ids also go in
 * as `t.id = ANY(...)`, a primary-key lookup, and the queue-and-state test is wrapped in IS TRUE so
 * no index serves it: the planner reaches each row by its key. Left bare, the test drove a scan of
 * the (queue, state) index, whose taken range fills with dead entries as a busy queue moves tasks
 * through leased and running, so each ack read thousands of dead rows (the tasks bench processed
 * 1,200 tasks/s on Postgres instead of 14,000/s); with IS TRUE alone, stale statistics chose a
 * sequential scan.
 */
export function pgPairedRows(states: readonly TaskState[], idsParam: number): string {
  return `t.id = ANY($${idsParam}::text[]) AND t.id = v.id AND t.lease_token = v.lease_token AND (t.queue = $1::text AND t.state IN ${sqlStates(states)}) IS TRUE`;
}

export function sqlStates(states: readonly TaskState[]): string {
  return `(${states.map((state) => `'${state}'`).join(', ')})`;
}

/** Where `event` leads from every state that allows it, when that target does not depend on the guard. */
function soleTarget(event: TaskEventType): TaskState {
  const targets = new Set(statesWith(event).flatMap((state) => [nextTaskStep(state, event, true).state, nextTaskStep(state, event, false).state]));
  if (targets.size !== 1) throw new Error(`task event ${event} has no single target: ${[...targets].join(', ')}`);
  return [...targets][0]!;
}

export const LEASABLE = statesWith('LEASE');
export const RETRY_DUE = statesWith('RETRY');
/** Held by a worker: what heartbeats renew and expiry returns. */
export const TAKEN = statesWith('EXPIRE');
export const HEARTBEAT_STATES = statesWith('HEARTBEAT');
export const STARTABLE = statesWith('START');
export const LEASED = soleTarget('LEASE');
export const RUNNING = soleTarget('START');
export const DEAD_LETTERED = soleTarget('DEAD_LETTER');
export const SUCCEEDED = soleTarget('SUCCEED');
export const REDRIVEN = soleTarget('REDRIVE');
export const REDRIVABLE = statesWith('REDRIVE');
/** What `maxDepth` bounds: states from which a task can still run. */
export const ACTIVE: readonly TaskState[] = TASK_STATES.filter((state) => state === 'queued' || LEASABLE.includes(state) || RETRY_DUE.includes(state) || TAKEN.includes(state));

/** History entries a record shows at most (the newest). */
export const MAX_HISTORY = 50;
const MAX_DETAIL = 1_000;

export function historyLine(at: number, state: TaskState, reason?: TaskFailureReason, detail?: string): string {
  const entry: TaskHistoryEntry = {
    at,
    state,
    ...(reason === undefined ? {} : { reason }),
    ...(detail === undefined ? {} : { detail: detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL - 1)}…` : detail }),
  };
  return `${JSON.stringify(entry)}\n`;
}

export function parseHistory(text: string): TaskHistoryEntry[] {
  const lines = text.split('\n').filter((line) => line.length > 0);
  return lines.slice(-MAX_HISTORY).map((line) => JSON.parse(line) as TaskHistoryEntry);
}

/** The last MAX_HISTORY lines of a history, for rewrites (redrive), so a task redriven forever stays bounded. */
export function trimHistory(text: string): string {
  const lines = text.split('\n').filter((line) => line.length > 0);
  return lines.length <= MAX_HISTORY ? text : `${lines.slice(-MAX_HISTORY).join('\n')}\n`;
}

/** A chain of events from one state: each step through the table; the states passed and the attempts counted. */
export function walk(from: TaskState, events: readonly TaskEventType[], attempts: number, maxRetries: number): { steps: TaskStep[]; attempts: number } {
  const steps: TaskStep[] = [];
  let state = from;
  let count = attempts;
  for (const event of events) {
    const step = nextTaskStep(state, event, count < maxRetries);
    if (step.countsAttempt) count++;
    steps.push(step);
    state = step.state;
  }
  return { steps, attempts: count };
}

/** Describes an error as history details and dead-letter entries show it: name, code, message. */
export function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${error.name}${typeof code === 'string' ? ` [${code}]` : ''}: ${error.message}`;
  }
  try {
    return String(JSON.stringify(error) ?? error);
  } catch {
    return String(error);
  }
}
