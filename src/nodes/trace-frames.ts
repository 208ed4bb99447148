/**
 * Trace context across nodes: a send, send by name or call leaving this node while a span is
 * current (the caller's `molo.call` span, or the active span of a program with a context manager)
 * carries that span's W3C context beside its message, as a `TracedMessage` in the frame. The
 * receiving router unwraps it before anything else reads the frame, and handles the frame inside a
 * `molo.node.receive` span that is the remote span's child, so what the delivery starts there (the
 * callee's side of a call, a forward to a third node) joins the caller's trace.
 *
 * Nothing is wrapped when no span is current (no tracer provider, or tracing off): the frame is
 * exactly what it was, and a receiver pays one `instanceof` per frame.
 */
import { registerWireClass } from '../actors/placement/wire-classes.js';
import { FrameKind, type Frame } from '../actors/placement/frames.js';
import { parseCarrier, type TraceCarrier } from '../telemetry/index.js';

/** Span names of the node transport. */
export const NodeSpanName = {
  /** Handling one traced send or call from a peer: the child of the sender's span. */
  receive: 'molo.node.receive',
} as const;

/** A message with its sender's trace context, as it crosses a node link. */
export class TracedMessage {
  constructor(
    /** Undefined when the peer sent one that does not check out: the message is still delivered. */
    readonly carrier: TraceCarrier | undefined,
    readonly message: unknown,
  ) {}
}

registerWireClass<TracedMessage>({
  Class: TracedMessage,
  type: 0x58,
  write: (value) => [value.carrier?.traceparent ?? null, value.carrier?.tracestate ?? null, value.message],
  read: (data) => {
    if (!Array.isArray(data) || data.length !== 3) return new TracedMessage(undefined, data);
    const [traceparent, tracestate, message] = data as unknown[];
    return new TracedMessage(parseCarrier({ traceparent, tracestate: tracestate ?? undefined }), message);
  },
});

/** `frame` with `carrier` beside its message, when it is a send, send by name or call. */
export function traceFrame(frame: Frame, carrier: TraceCarrier): Frame {
  switch (frame[0]) {
    case FrameKind.Send:
    case FrameKind.SendName:
      return [frame[0], frame[1], new TracedMessage(carrier, frame[2])] as Frame;
    case FrameKind.Call: {
      const [kind, origin, id, to, request, timeoutMs] = frame;
      return [kind, origin, id, to, new TracedMessage(carrier, request), timeoutMs];
    }
    default:
      return frame;
  }
}

/** The frame without its trace context, and that context (undefined: it carried none). */
export function untraceFrame(frame: Frame): readonly [Frame, TraceCarrier | undefined, 'send' | 'call' | undefined] {
  switch (frame[0]) {
    case FrameKind.Send:
    case FrameKind.SendName: {
      const message = frame[2];
      if (!(message instanceof TracedMessage)) return [frame, undefined, undefined];
      return [[frame[0], frame[1], message.message] as Frame, message.carrier, 'send'];
    }
    case FrameKind.Call: {
      const [kind, origin, id, to, request, timeoutMs] = frame;
      if (!(request instanceof TracedMessage)) return [frame, undefined, undefined];
      return [[kind, origin, id, to, request.message, timeoutMs], request.carrier, 'call'];
    }
    default:
      return [frame, undefined, undefined];
  }
}
