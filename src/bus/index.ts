// The bus: ephemeral topics and durable streams; the task queue and the scheduler to come.
export * from './errors.js';
export * from './topics/index.js';
export * from './streams/index.js';
