export { ActorSystem } from './system.js';
export {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_MAX_ACTORS,
  MAX_ACTORS_CAP,
  MAX_TIMEOUT_MS,
  type ActorSystemOptions,
} from './system-options.js';
export type { ActorBehaviour, ActorContext, ActorRuntime, Envelope, HandlerFunction, SpawnOptions } from './behaviour.js';
export type { ActorStatus, ProcessInfo } from './process-info.js';
export { Ref, type MonitorRef } from './ref.js';
export { MAX_REF_TEXT_LENGTH, parseRef } from './ref-text.js';
export { CallRequest, DownMessage, ExitMessage, RECEIVE_TIMEOUT, type ReceiveTimeout, type SystemMessage } from './messages.js';
export { formatReason, isCleanExit, isShutdownWith, shutdownWith, type ExitReason, type ExitValue, type ShutdownWith } from './exit.js';
export { SimulatedClock, systemClock, type Clock, type ClockTimer } from './clock.js';
export { TimerEntry } from './timers.js';
export {
  DEFAULT_MAILBOX_CAPACITY,
  MAX_MAILBOX_CAPACITY,
  type MailboxOptions,
  type OverflowPolicy,
} from './mailbox.js';
export type { KernelObserver, ObservedActor, ObservedSpan } from './observer.js';
export {
  ActorCrashed,
  ActorErrorCode,
  ActorLimitReached,
  AlreadyNamed,
  CalleeExited,
  CallingSelf,
  CallTimeout,
  InvalidRef,
  InvalidOption,
  MailboxFull,
  MoloError,
  NameTaken,
  NoProc,
  NotInActor,
  ReceivePending,
  SystemStopped,
  PayloadTooLarge,
  NotSerializable,
  PlacementFailed,
  InvalidPlacement,
} from './errors.js';
export { behaviourModule, type BehaviourModule } from './placement/behaviour-module.js';
export { hostsExited, placementHosts, placementStats, terminateHost, type HostInfo, type PlacementStats } from './placement/hosts.js';
export type { PlacedSpawnOptions } from './placement/hub.js';
export type { Placement } from './placement/host-channel.js';
export { DEFAULT_PAYLOAD_LIMIT_BYTES, MAX_PAYLOAD_LIMIT_BYTES } from './placement/limits.js';
export { registerWireClass, type WireClass } from './placement/wire-classes.js';
