/** Errors of the scheduler; their codes are in the bus registry (`BusErrorCode`). */
import { codedError } from '../../actors/coded-error.js';
import { BusErrorCode } from '../errors.js';

/** A schedule that is not one: a bad `runAt`, an unknown kind or missed-fire policy; `field` names it. */
export class InvalidSchedule extends codedError(BusErrorCode.InvalidSchedule, (field: string, detail: string) => ({
  message: `invalid schedule ${field}: ${detail}`,
  fields: { field },
})) {}

/** A cron expression that is not five valid fields (minute hour day-of-month month day-of-week, UTC). */
export class InvalidCronExpression extends codedError(BusErrorCode.InvalidCronExpression, (expression: unknown, detail: string, options?: { cause?: unknown }) => ({
  message: `invalid cron expression ${JSON.stringify(String(expression).slice(0, 100))}: ${detail}`,
  fields: { expression },
  options,
})) {}

/** An interval under the minimum of 60 s (S7-5), or not a whole number of milliseconds. */
export class IntervalTooShort extends codedError(BusErrorCode.IntervalTooShort, (intervalMs: number, minimumMs: number) => ({
  message: `interval of ${intervalMs} ms is under the minimum of ${minimumMs} ms`,
  fields: { intervalMs, minimumMs },
})) {}

/** No schedule entry with this id (never added, removed, or a one-shot `at` entry that has fired). */
export class ScheduleNotFound extends codedError(BusErrorCode.ScheduleNotFound, (id: string) => ({
  message: `no schedule '${id}'`,
  fields: { id },
})) {}

/** An `add` with an id already in use (use `update` to change an entry). */
export class ScheduleExists extends codedError(BusErrorCode.ScheduleExists, (id: string) => ({
  message: `schedule '${id}' already exists`,
  fields: { id },
})) {}

/** An `add` beyond `maxSchedules` entries in the store (default 10,000). */
export class ScheduleLimitReached extends codedError(BusErrorCode.ScheduleLimit, (limit: number) => ({
  message: `the scheduler already holds ${limit} schedules (maxSchedules = ${limit})`,
  fields: { limit },
})) {}

/** The scheduler was closed: it fires nothing more and takes no more calls. */
export class SchedulerClosed extends codedError(BusErrorCode.SchedulerClosed, (scheduler: string) => ({
  message: `scheduler '${scheduler}' is closed`,
  fields: { scheduler },
})) {}

/**
 * `openScheduler` with a `db` in which the queue's tables are not found: every fire would fail.
 * Leave `db` out and the scheduler uses the queue's own database.
 */
export class SchedulerQueueMismatch extends codedError(BusErrorCode.SchedulerQueueMismatch, (table: string, options?: { cause?: unknown }) => ({
  message: `the scheduler's db does not hold the task queue's table ${table}: leave \`db\` out to use the queue's own database`,
  fields: { table },
  options,
})) {}
