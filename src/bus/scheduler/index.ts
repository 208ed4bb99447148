// The scheduler: run_at, intervals and cron, next fire times from the injected clock; the fenced scheduler service.
export * from './errors.js';
export { SCHEDULER_DEFAULTS, firstDue, nextFireAfter, parseCron, parseSchedule, type MissedFirePolicy, type Schedule, type ScheduleInput } from './schedule.js';
export { MAX_COUNTED_FIRES, decideFires, type FireDecision } from './missed-fires.js';
export type { ScheduleEntry, ScheduleEntryInput, ScheduleEntryPatch, ScheduledTask, StoredSchedule } from './entry.js';
export { Scheduler, openScheduler, type ScheduleListOptions } from './scheduler.js';
export { SCHEDULER_CAPS, type SchedulerOptions } from './options.js';
export { SCHEDULER_BEHAVIOUR, describeScheduler, schedulerChild, schedulerProvider } from './supervised.js';
export { SchedulerSpanName, schedulerServerName, type SchedulerStatus } from './scheduler-actor.js';
export { DEFAULT_SCHEDULE_TABLE } from './store.js';
export { SchedulerMetrics, schedulerMetrics, type SchedulerCounts } from './metrics.js';
