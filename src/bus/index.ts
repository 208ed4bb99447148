// The bus: ephemeral topics now; durable streams, the task queue and the scheduler to come.
export * from './errors.js';
export * from './topics/index.js';
