// Scheduler time computations: run_at, intervals and cron, next fire times from the injected clock.
export * from './errors.js';
