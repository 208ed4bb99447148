/**
 * What telemetry reads from the kernel, stated structurally: src/telemetry is the lowest layer and
 * never imports src/actors. The kernel's `ObservedActor` and `ExitReason` fit these shapes; a type
 * test (test/telemetry/observer-shape.test.ts) keeps them in step.
 */

/** The numbers sampled from an actor (a subset of the kernel's process info). */
export interface ActorSample {
  readonly behaviour: string;
  readonly mailboxLength: number;
  readonly messagesHandled: number;
  readonly messagesDropped: number;
}

/** An actor as the lifecycle hooks present it. */
export interface TelemetryActor {
  readonly self: { toString(): string };
  readonly name: string | undefined;
  readonly behaviour: { readonly name?: string };
  info(): ActorSample;
}

/** An open span, as the kernel ends it: with the error if the operation failed, and late attributes. */
export interface TelemetrySpan {
  end(error?: unknown, attributes?: Readonly<Record<string, unknown>>): void;
  /** Runs `fn` inside the span: what it starts or sends synchronously is the span's child. */
  run?<T>(fn: () => T): T;
}

/** Exit reasons grouped for a metric label: few values, whatever the reason's detail. */
export type ExitClass = 'normal' | 'shutdown' | 'killed' | 'noproc' | 'noconnection' | 'error';

export const EXIT_CLASSES: readonly ExitClass[] = ['normal', 'shutdown', 'killed', 'noproc', 'noconnection', 'error'];

/** `{shutdown, _}` counts as `shutdown`; anything that is not a known atom is an `error`. */
export function classifyExit(reason: unknown): ExitClass {
  switch (reason) {
    case 'normal':
    case 'shutdown':
    case 'killed':
    case 'noproc':
    case 'noconnection':
      return reason;
    case 'kill':
      return 'killed';
    default:
      if (typeof reason === 'object' && reason !== null && !(reason instanceof Error) && 'shutdown' in reason) return 'shutdown';
      return 'error';
  }
}

/** The same text as the kernel's `formatReason`, for reasons that reach telemetry raw. */
export { describeReason } from './describe-reason.js';
