/**
 * Trace context carried with work that outlives the call that started it (a task in its envelope,
 * a stream message in its headers, a message crossing to another node), as W3C Trace Context
 * (`traceparent`, `tracestate`). It is encoded here from the span context rather than through
 * `propagation.inject`, because the API's default propagator is a no-op until an SDK registers one:
 * a program that registers a tracer provider but no propagator would otherwise lose every link.
 *
 * `currentCarrier()` is what a sender attaches: the span Molo is running an operation inside (a
 * synchronous slot, so it works without a context manager), else the active span of the caller's
 * context (a context manager is registered, as NodeSDK does). Both cost a variable read and a
 * global lookup when nothing is registered; the API itself is loaded only once something is.
 */
import type { Context, SpanContext } from '@opentelemetry/api';
import { otelApi } from './lazy-modules.js';

/** W3C Trace Context of a span, as stored beside the work it started. */
export interface TraceCarrier {
  /** `00-<trace id>-<span id>-<flags>` (W3C Trace Context, version 00). */
  readonly traceparent: string;
  /** Vendor entries (`k1=v1,k2=v2`), when the span has any. */
  readonly tracestate?: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** W3C caps tracestate at 32 entries; 512 characters is the length it asks propagators to keep. */
const MAX_TRACESTATE = 512;

/** Where `@opentelemetry/api` (major 1) keeps what an SDK registered, shared by all its copies. */
const API_GLOBAL = Symbol.for('opentelemetry.js.api.1');

export function encodeCarrier(context: SpanContext): TraceCarrier | undefined {
  const { traceId, spanId } = context;
  if (!/^[0-9a-f]{32}$/.test(traceId) || traceId === ZERO_TRACE || !/^[0-9a-f]{16}$/.test(spanId) || spanId === ZERO_SPAN) return undefined;
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  const traceparent = `00-${traceId}-${spanId}-${flags}`;
  const state = context.traceState?.serialize();
  return state !== undefined && state !== '' ? { traceparent, tracestate: state } : { traceparent };
}

/**
 * A carrier read back from storage or another node, checked: undefined unless `traceparent` is a
 * valid version-00 header (an invalid one means "no parent", never an error: tracing must not fail
 * the work it describes). A bad `tracestate` is dropped, the parent kept.
 */
export function parseCarrier(value: unknown): TraceCarrier | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { traceparent, tracestate } = value as { traceparent?: unknown; tracestate?: unknown };
  if (typeof traceparent !== 'string') return undefined;
  const match = TRACEPARENT.exec(traceparent);
  if (match === null || match[1] === ZERO_TRACE || match[2] === ZERO_SPAN) return undefined;
  return typeof tracestate === 'string' && tracestate.length > 0 && tracestate.length <= MAX_TRACESTATE ? { traceparent, tracestate } : { traceparent };
}

/** The remote parent a carrier names, as an API context (the carrier must have been checked). */
export function contextOf(carrier: TraceCarrier): Context {
  const api = otelApi();
  const [, traceId, spanId, flags] = TRACEPARENT.exec(carrier.traceparent)!;
  const spanContext: SpanContext = { traceId: traceId!, spanId: spanId!, traceFlags: Number.parseInt(flags!, 16), isRemote: true };
  if (carrier.tracestate !== undefined) spanContext.traceState = api.createTraceState(carrier.tracestate);
  return api.trace.setSpanContext(api.ROOT_CONTEXT, spanContext);
}

let current: TraceCarrier | undefined;

/** Runs `fn` with `carrier` as the one senders attach (synchronously: what `fn` sends, not what it schedules). */
export function withCarrier<T>(carrier: TraceCarrier | undefined, fn: () => T): T {
  const previous = current;
  current = carrier;
  try {
    return fn();
  } finally {
    current = previous;
  }
}

/** The span context Molo is running an operation inside (set by `withCarrier`), if any. */
export function heldCarrier(): TraceCarrier | undefined {
  return current;
}

/** What a sender attaches now: Molo's current operation span, else the caller's active span; undefined when nothing traces. */
export function currentCarrier(): TraceCarrier | undefined {
  if (current !== undefined) return current;
  // No context manager registered: the active context is always the root one, with no span.
  const registered = (globalThis as Record<symbol, { context?: unknown } | undefined>)[API_GLOBAL];
  if (registered?.context === undefined) return undefined;
  const spanContext = otelApi().trace.getSpanContext(otelApi().context.active());
  return spanContext === undefined ? undefined : encodeCarrier(spanContext);
}
