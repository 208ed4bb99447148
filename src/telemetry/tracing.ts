import type { Attributes, AttributeValue, Span, Tracer, TracerProvider } from '@opentelemetry/api';
import { otelApi } from './lazy-modules.js';
import type { TelemetrySpan } from './actor-shape.js';
import { contextOf, encodeCarrier, heldCarrier, parseCarrier, withCarrier, type TraceCarrier } from './trace-context.js';

/** The instrumentation scope of every span Molo opens. */
export const TRACER_NAME = 'molo';

/** Span names, one per instrumented operation. */
export const SpanName = {
  /** A `call` (and so every GenServer call), from send to reply, timeout or callee exit. */
  call: 'molo.call',
  /** A supervisor restarting a child's group, from the decision to the group running again. */
  restart: 'molo.supervisor.restart',
} as const;

/** The API's proxy provider (what the global provider is until and after an SDK registers). */
interface DelegatingProvider extends TracerProvider {
  getDelegateTracer(name: string, version?: string): Tracer | undefined;
}

/**
 * Opens spans through `@opentelemetry/api`'s global tracer provider, and only when an SDK is
 * registered: without one, `startSpan` returns undefined after a global lookup, so the kernel
 * neither builds a span nor wraps the operation. A span the SDK does not record (not sampled) is
 * dropped the same way.
 *
 * The global provider is looked up again until an SDK is found, so one registered after the
 * telemetry was made is picked up from then on (and kept; after `trace.disable()`, make a new
 * telemetry). It is looked up rather than held through the API's proxy because the API is loaded
 * lazily (as CommonJS, see lazy-modules.ts) and an ESM caller's `setGlobalTracerProvider` reaches
 * the shared global but not our copy's proxy.
 */
export class RuntimeTracer {
  #tracer: Tracer | undefined;
  readonly #provider: TracerProvider | undefined;

  /** `provider`: a provider to use instead of the global one (a test's, or an SDK not registered globally). */
  constructor(provider?: TracerProvider) {
    this.#provider = provider;
  }

  /** True once an SDK is registered (through the API) to record spans. */
  get active(): boolean {
    return this.#resolve() !== undefined;
  }

  /**
   * A recording span, or undefined when nothing would record it (no SDK, or not sampled). Its
   * parent is `parent` when given and valid (work carried from another span: a task's enqueue, a
   * message's publish or sender; any object with W3C `traceparent` and `tracestate` fields, such as
   * a message's headers, is checked), else the span whose `run` is on the stack, else the caller's
   * active context.
   */
  startSpan(name: string, attributes: Readonly<Record<string, unknown>>, parent?: TraceCarrier | Readonly<Record<string, string>> | null): TelemetrySpan | undefined {
    const tracer = this.#resolve();
    if (tracer === undefined) return undefined;
    // Without an explicit parent, the operation Molo is running inside (a span's `run`) is the
    // parent even when no context manager is registered to make it the active one.
    const carried = parent === undefined || parent === null ? heldCarrier() : parseCarrier(parent);
    const span = tracer.startSpan(name, { kind: otelApi().SpanKind.INTERNAL }, carried === undefined ? undefined : contextOf(carried));
    if (!span.isRecording()) {
      span.end();
      return undefined;
    }
    span.setAttributes(toAttributes(attributes));
    return new OpenSpan(span);
  }

  #resolve(): Tracer | undefined {
    if (this.#tracer !== undefined) return this.#tracer;
    const provider = this.#provider ?? otelApi().trace.getTracerProvider();
    // The API's proxy stands in until an SDK registers: it has a delegate tracer only then.
    return (this.#tracer = isDelegating(provider) ? provider.getDelegateTracer(TRACER_NAME) : provider.getTracer(TRACER_NAME));
  }
}

function isDelegating(provider: TracerProvider): provider is DelegatingProvider {
  return typeof (provider as Partial<DelegatingProvider>).getDelegateTracer === 'function';
}

/** The W3C context of `span`, to store beside the work it starts; undefined for no span (nothing traces). */
export function carrierOf(span: TelemetrySpan | undefined): TraceCarrier | undefined {
  return span instanceof OpenSpan ? span.carrier() : undefined;
}

class OpenSpan implements TelemetrySpan {
  #carrier: TraceCarrier | undefined;
  constructor(readonly span: Span) {}

  carrier(): TraceCarrier | undefined {
    return (this.#carrier ??= encodeCarrier(this.span.spanContext()));
  }

  /**
   * Runs `fn` inside this span: spans opened in it (with a context manager) are its children, and
   * what it sends to another node carries it (with or without one).
   */
  run<T>(fn: () => T): T {
    const api = otelApi();
    return withCarrier(this.carrier(), () => api.context.with(api.trace.setSpan(api.context.active(), this.span), fn));
  }

  end(error?: unknown, attributes?: Readonly<Record<string, unknown>>): void {
    if (attributes !== undefined) this.span.setAttributes(toAttributes(attributes));
    if (error !== undefined) {
      this.span.recordException(error instanceof Error ? error : String(error));
      this.span.setStatus({ code: otelApi().SpanStatusCode.ERROR, message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
    }
    this.span.end();
  }
}

/** OTel attribute values are primitives (or arrays of them); refs and reasons become their text. */
function toAttributes(fields: Readonly<Record<string, unknown>>): Attributes {
  const attributes: Attributes = {};
  for (const key in fields) {
    const value = fields[key];
    if (value === undefined || value === null) continue;
    attributes[key] = isAttributeValue(value) ? value : String(value);
  }
  return attributes;
}

function isAttributeValue(value: unknown): value is AttributeValue {
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean';
}
