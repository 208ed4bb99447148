// The public API of Molo. Areas also have their own entries (`molo/actors`, `molo/behaviours`).
export * from './actors/index.js';
export * from './behaviours/index.js';
export * from './admin/index.js';
export * from './telemetry/index.js';
export * from './data/index.js';
export * from './bus/index.js';
