// Scheduler time computations: run_at, intervals and cron, next fire times from the injected clock.
export * from './errors.js';
export { SCHEDULER_DEFAULTS, firstDue, nextFireAfter, parseCron, parseSchedule, type MissedFirePolicy, type Schedule, type ScheduleInput } from './schedule.js';
export { MAX_COUNTED_FIRES, decideFires, type FireDecision } from './missed-fires.js';
