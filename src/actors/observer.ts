import type { ExitReason } from './exit.js';
import type { Ref } from './ref.js';

/** The view of an actor that lifecycle hooks get. */
export interface ObservedActor {
  readonly self: Ref;
  readonly name: string | undefined;
  readonly behaviour: { readonly name?: string };
  readonly parent: Ref | undefined;
}

/**
 * Lifecycle hooks the kernel calls synchronously; telemetry plugs in here. When no observer is
 * set the kernel pays one undefined check per spawn and exit.
 */
export interface KernelObserver {
  spawned(actor: ObservedActor): void;
  exited(actor: ObservedActor, reason: ExitReason): void;
  /** A behaviour's lifecycle event (a child restart, a crash report); fields are fixed per event. */
  report?(event: string, fields: Readonly<Record<string, unknown>>): void;
}
