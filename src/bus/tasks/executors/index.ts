// Executors by placement.
import { InvalidBusOption } from '../../errors.js';
import type { ActorRuntime, Ref } from '../../../actors/index.js';
import type { ExecutorSpec, TaskExecutor } from '../api.js';
import { LoopExecutor } from './loop.js';
import { PlacedExecutor, type HostBootHooks } from './placed.js';

export type { HostBootHooks };

/**
 * A fresh executor for one worker: `thread` and `process` start a host of its own at once (gated,
 * see boot-gate.ts). `prefetch` overrides the spec's (the pool's cap when it adapts prefetch).
 */
export function createExecutor(system: ActorRuntime, spec: ExecutorSpec, progressTo?: Ref, hooks?: HostBootHooks, prefetch?: number): TaskExecutor {
  if (spec.placement === 'loop') return new LoopExecutor(spec.handlers);
  if (spec.placement === 'thread' || spec.placement === 'process') return new PlacedExecutor(system, spec.placement, spec.module, prefetch ?? spec.prefetch, progressTo, hooks);
  throw new InvalidBusOption('executor.placement', `must be loop, thread or process, got ${String((spec as { placement?: unknown }).placement)}`);
}
