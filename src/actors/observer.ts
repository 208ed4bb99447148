import type { ProcessInfo } from './process-info.js';
import type { ExitReason } from './exit.js';
import type { Ref } from './ref.js';

/** The view of an actor that lifecycle hooks get. */
export interface ObservedActor {
  readonly self: Ref;
  readonly name: string | undefined;
  readonly behaviour: { readonly name?: string };
  readonly parent: Ref | undefined;
  /** Sampled by metrics at scrape time (mailbox depth, messages handled). */
  info(): ProcessInfo;
}

/** An open trace span; `end` closes it, with the error if the operation failed and any late attributes. */
export interface ObservedSpan {
  end(error?: unknown, attributes?: Readonly<Record<string, unknown>>): void;
  /** Runs `fn` inside the span, so what it sends (to another node, say) carries the span's context. */
  run?<T>(fn: () => T): T;
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
  /**
   * Opens a span around an operation (a call, a supervisor restart); undefined when nothing records
   * it. The system checks once, at construction, whether the observer has it: without it a call
   * pays one branch.
   */
  startSpan?(name: string, attributes: Readonly<Record<string, unknown>>): ObservedSpan | undefined;
}
