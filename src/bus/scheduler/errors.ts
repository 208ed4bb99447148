/** Errors of the scheduler; their codes are in the bus registry (`BusErrorCode`). */
import { MoloError } from '../../actors/index.js';
import { BusErrorCode } from '../errors.js';

/** A schedule that is not one: a bad `runAt`, an unknown kind or missed-fire policy; `field` names it. */
export class InvalidSchedule extends MoloError {
  static readonly code = BusErrorCode.InvalidSchedule;
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super(BusErrorCode.InvalidSchedule, `invalid schedule ${field}: ${detail}`);
  }
}

/** A cron expression that is not five valid fields (minute hour day-of-month month day-of-week, UTC). */
export class InvalidCronExpression extends MoloError {
  static readonly code = BusErrorCode.InvalidCronExpression;
  constructor(
    readonly expression: unknown,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(BusErrorCode.InvalidCronExpression, `invalid cron expression ${JSON.stringify(String(expression).slice(0, 100))}: ${detail}`, options);
  }
}

/** An interval under the minimum of 60 s (S7-5), or not a whole number of milliseconds. */
export class IntervalTooShort extends MoloError {
  static readonly code = BusErrorCode.IntervalTooShort;
  constructor(
    readonly intervalMs: number,
    readonly minimumMs: number,
  ) {
    super(BusErrorCode.IntervalTooShort, `interval of ${intervalMs} ms is under the minimum of ${minimumMs} ms`);
  }
}

/** No schedule entry with this id (never added, removed, or a one-shot `at` entry that has fired). */
export class ScheduleNotFound extends MoloError {
  static readonly code = BusErrorCode.ScheduleNotFound;
  constructor(readonly id: string) {
    super(BusErrorCode.ScheduleNotFound, `no schedule '${id}'`);
  }
}

/** An `add` with an id already in use (use `update` to change an entry). */
export class ScheduleExists extends MoloError {
  static readonly code = BusErrorCode.ScheduleExists;
  constructor(readonly id: string) {
    super(BusErrorCode.ScheduleExists, `schedule '${id}' already exists`);
  }
}

/** An `add` beyond `maxSchedules` entries in the store (default 10,000). */
export class ScheduleLimitReached extends MoloError {
  static readonly code = BusErrorCode.ScheduleLimit;
  constructor(readonly limit: number) {
    super(BusErrorCode.ScheduleLimit, `the scheduler already holds ${limit} schedules (maxSchedules = ${limit})`);
  }
}

/** The scheduler was closed: it fires nothing more and takes no more calls. */
export class SchedulerClosed extends MoloError {
  static readonly code = BusErrorCode.SchedulerClosed;
  constructor(readonly scheduler: string) {
    super(BusErrorCode.SchedulerClosed, `scheduler '${scheduler}' is closed`);
  }
}

/**
 * `openScheduler` with a `db` in which the queue's tables are not found: every fire would fail.
 * Leave `db` out and the scheduler uses the queue's own database.
 */
export class SchedulerQueueMismatch extends MoloError {
  static readonly code = BusErrorCode.SchedulerQueueMismatch;
  constructor(
    readonly table: string,
    options?: { cause?: unknown },
  ) {
    super(
      BusErrorCode.SchedulerQueueMismatch,
      `the scheduler's db does not hold the task queue's table ${table}: leave \`db\` out to use the queue's own database`,
      options,
    );
  }
}
