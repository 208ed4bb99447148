// The task queue's foundations: lifecycle table, envelope, retry policy (the queue itself builds on streams).
export * from './errors.js';
export * from './lifecycle.js';
