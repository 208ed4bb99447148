/**
 * Schedule entries: what `add` and `update` take, validated once, and the JSON form the store keeps.
 * An entry names a queue, a task template (a TaskInput without `runAt` and `idempotencyKey`: each
 * fire sets those) and a schedule. The stored schedule is the input with its defaults resolved
 * (an interval's anchor, the missed-fire policy), so a reload fires on the same grid.
 */
import { randomUUID } from 'node:crypto';
import { createEnvelope, type TaskInput } from '../tasks/envelope.js';
import { InvalidSchedule } from './errors.js';
import { parseSchedule, type MissedFirePolicy, type Schedule, type ScheduleInput } from './schedule.js';

/** The task each fire enqueues: a TaskInput without `runAt` and `idempotencyKey`, which each fire sets. */
export type ScheduledTask = Omit<TaskInput, 'runAt' | 'idempotencyKey'>;

export interface ScheduleEntryInput {
  /** 1..128 of [A-Za-z0-9_.:-]; default a random UUID. */
  readonly id?: string;
  /** The task queue each fire enqueues into (it must exist). */
  readonly queue: string;
  readonly task: ScheduledTask;
  readonly schedule: ScheduleInput;
}

/** What an `update` may change; the rest stays. A new schedule is due afresh from now. */
export interface ScheduleEntryPatch {
  readonly queue?: string;
  readonly task?: ScheduledTask;
  readonly schedule?: ScheduleInput;
}

/** A schedule as stored: plain JSON, times in epoch ms. */
export type StoredSchedule =
  | { readonly kind: 'at'; readonly runAt: number; readonly missed: MissedFirePolicy }
  | { readonly kind: 'interval'; readonly everyMs: number; readonly anchor: number; readonly missed: MissedFirePolicy }
  | { readonly kind: 'cron'; readonly expression: string; readonly timezone?: string; readonly missed: MissedFirePolicy };

export interface ScheduleEntry {
  readonly id: string;
  readonly queue: string;
  readonly task: ScheduledTask;
  readonly schedule: StoredSchedule;
  /** Epoch ms the entry is next due, or null: never again. */
  readonly nextFireAt: number | null;
  /** The scheduled time of the last fire that ran, or null. */
  readonly lastFireAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

const ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export function checkScheduleId(id: unknown): string {
  if (typeof id !== 'string' || !ID.test(id)) throw new InvalidSchedule('id', 'must be 1..128 characters of A-Z a-z 0-9 _ . : -');
  return id;
}

export function checkQueueName(queue: unknown): string {
  if (typeof queue !== 'string' || queue.length === 0 || queue.length > 255) throw new InvalidSchedule('queue', 'must be a queue name of 1..255 characters');
  return queue;
}

/** Validates the template as an enqueue would (name, payload cap, retries, timeouts), and refuses the fields a fire sets. */
export function checkTask(task: unknown): ScheduledTask {
  if (typeof task !== 'object' || task === null || Array.isArray(task)) throw new InvalidSchedule('task', 'must be an object { name, payload?, ... }');
  for (const field of ['runAt', 'idempotencyKey'] as const) {
    if ((task as Record<string, unknown>)[field] !== undefined) throw new InvalidSchedule(`task.${field}`, 'is set by each fire, not by the template');
  }
  createEnvelope(task as TaskInput);
  return task as ScheduledTask;
}

/** Parses (and so validates) a schedule input into its runtime and stored forms. */
export function resolveSchedule(input: ScheduleInput, nowMs: number): { schedule: Schedule; stored: StoredSchedule } {
  const schedule = parseSchedule(input, nowMs);
  return { schedule, stored: storedOf(schedule) };
}

/** The runtime form of a stored schedule (cron recompiled). */
export function scheduleOf(stored: StoredSchedule): Schedule {
  return parseSchedule(stored as ScheduleInput, 0);
}

export function newScheduleId(): string {
  return randomUUID();
}

function storedOf(schedule: Schedule): StoredSchedule {
  switch (schedule.kind) {
    case 'at':
      return { kind: 'at', runAt: schedule.runAt, missed: schedule.missed };
    case 'interval':
      return { kind: 'interval', everyMs: schedule.everyMs, anchor: schedule.anchor, missed: schedule.missed };
    case 'cron':
      // UTC is left out, so entries stored before time zones existed read back the same.
      return { kind: 'cron', expression: schedule.expression, ...(schedule.timezone === 'UTC' ? {} : { timezone: schedule.timezone }), missed: schedule.missed };
    default:
      throw new InvalidSchedule('kind', 'unknown');
  }
}
