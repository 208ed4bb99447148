export { GenServer, NO_REPLY, TIMEOUT, type GenServerTimeout, type StartedAndMonitored, type CallOf, type CastOf, type CastFor, type ReplyFor, type RequestFor, type From, type GenServerStartOptions, type GenServerPlacedOptions, type NoReply, type ReplyOf, type ServerRef } from './gen-server.js';
export { Supervisor, SUPERVISOR_CALL_TIMEOUT_MS, type SupervisorModuleStartOptions, type SupervisorStartOptions } from './supervisor.js';
export {
  DEFAULT_INTENSITY,
  DEFAULT_MAX_CHILDREN,
  DEFAULT_PERIOD_MS,
  MAX_CHILDREN_CAP,
  IGNORE,
  type Ignore,
  type SupervisorModule,
  type ChildCounts,
  type ChildEntry,
  type ChildStatus,
  type Strategy,
  type SupervisorSpec,
  type SupervisorStatus,
} from './supervisor-protocol.js';
export {
  DEFAULT_WORKER_SHUTDOWN_MS,
  backoffDelay,
  shouldRestart,
  worker,
  type AutoShutdown,
  type ChildSpec,
  type ChildStart,
  type ResolvedChildSpec,
  type StartedChild,
  type ChildStartContext,
  type ChildType,
  type RestartBackoff,
  type RestartType,
  type ShutdownPolicy,
} from './child-spec.js';
export { addRestart, RestartLog, restartsInWindow, type RestartWindow } from './intensity.js';
export {
  LIFECYCLE_EVENTS,
  LIFECYCLE_STATES,
  LIFECYCLE_TABLE,
  childLifecycle,
  compileLifecycle,
  nextLifecycleState,
  type LifecycleCandidate,
  type LifecycleEvent,
  type LifecycleEventType,
  type LifecycleGuard,
  type LifecycleState,
  type LifecycleTable,
} from './lifecycle.js';
export * from './errors.js';
export * from './state-machine.js';
export * from './programs/index.js';
