// Executors by placement. `thread` and `process` are built in placed.ts (next change).
import { InvalidBusOption } from '../../errors.js';
import type { ActorRuntime } from '../../../actors/index.js';
import type { ExecutorSpec, TaskExecutor } from '../api.js';
import { LoopExecutor } from './loop.js';

/** A fresh executor for one worker. */
export function createExecutor(_system: ActorRuntime, spec: ExecutorSpec): TaskExecutor {
  if (spec.placement === 'loop') return new LoopExecutor(spec.handlers);
  throw new InvalidBusOption('executor.placement', `'${spec.placement}' executors are not built yet`);
}
