// The bus: ephemeral topics, durable streams, leader leases, the task queue's foundations and the
// scheduler's time computations.
export * from './errors.js';
export * from './topics/index.js';
export * from './streams/index.js';
export * from './leases/index.js';
export * from './tasks/index.js';
export * from './scheduler/index.js';
