import { PassThrough } from 'node:stream';
import {
  ROOT_CONTEXT,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Attributes,
  type AttributeValue,
  type Context,
  type Exception,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

/** One parsed pino line. */
export type LogRecord = Record<string, unknown> & { level: number; msg?: string };

/** A real stream for pino to write to, and the JSON lines it has received so far. */
export interface LogCapture {
  readonly stream: PassThrough;
  records(): LogRecord[];
}

export function logCapture(): LogCapture {
  const stream = new PassThrough();
  stream.setEncoding('utf8');
  let buffered = '';
  const records: LogRecord[] = [];
  stream.on('data', (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.length > 0) records.push(JSON.parse(line) as LogRecord);
    }
  });
  return { stream, records: () => [...records] };
}

/** A span as the recording provider keeps it. */
export interface RecordedSpan {
  name: string;
  readonly tracer: string;
  readonly attributes: Attributes;
  readonly exceptions: Exception[];
  status: SpanStatus;
  ended: boolean;
  readonly parentSpanId: string | undefined;
  readonly spanId: string;
}

/**
 * A minimal OpenTelemetry SDK stand-in: a TracerProvider registered through the API's real
 * `trace.setGlobalTracerProvider`, whose spans record what was done to them.
 */
export class RecordingTracerProvider implements TracerProvider {
  readonly spans: RecordedSpan[] = [];
  #nextId = 0;

  getTracer(name: string): Tracer {
    const startSpan = (spanName: string, options?: SpanOptions, context?: Context): Span => {
      const parent = context === undefined ? undefined : trace.getSpanContext(context);
      const record: RecordedSpan = {
        name: spanName,
        tracer: name,
        attributes: { ...options?.attributes },
        exceptions: [],
        status: { code: SpanStatusCode.UNSET },
        ended: false,
        parentSpanId: parent?.spanId,
        spanId: (++this.#nextId).toString(16).padStart(16, '0'),
      };
      this.spans.push(record);
      return new RecordingSpan(record, parent?.traceId ?? '0af7651916cd43dd8448eb211c80319c');
    };
    const startActiveSpan = (spanName: string, ...rest: unknown[]): unknown => {
      const fn = rest[rest.length - 1] as (span: Span) => unknown;
      return fn(startSpan(spanName, rest.length > 1 ? (rest[0] as SpanOptions) : undefined, ROOT_CONTEXT));
    };
    return { startSpan, startActiveSpan } as Tracer;
  }

  /** Ended spans named `name`. */
  ended(name: string): RecordedSpan[] {
    return this.spans.filter((span) => span.name === name && span.ended);
  }
}

class RecordingSpan implements Span {
  constructor(
    readonly record: RecordedSpan,
    readonly traceId: string,
  ) {}

  spanContext(): SpanContext {
    return { traceId: this.traceId, spanId: this.record.spanId, traceFlags: TraceFlags.SAMPLED };
  }

  setAttribute(key: string, value: AttributeValue): this {
    this.record.attributes[key] = value;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    Object.assign(this.record.attributes, attributes);
    return this;
  }

  addEvent(): this {
    return this;
  }

  addLink(): this {
    return this;
  }

  addLinks(): this {
    return this;
  }

  setStatus(status: SpanStatus): this {
    this.record.status = status;
    return this;
  }

  updateName(name: string): this {
    this.record.name = name;
    return this;
  }

  end(): void {
    if (this.record.ended) throw new Error(`span ${this.record.name} ended twice`);
    this.record.ended = true;
  }

  isRecording(): boolean {
    return !this.record.ended;
  }

  recordException(exception: Exception): void {
    this.record.exceptions.push(exception);
  }
}
