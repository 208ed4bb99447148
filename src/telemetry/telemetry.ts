import type { TelemetryActor, TelemetrySpan } from './actor-shape.js';
import { resolveLogger, type LoggerOption } from './logger.js';
import type { Logger } from './logger-api.js';
import { RuntimeMetrics, type MetricsOptions } from './metrics.js';
import { describeActor, logExit, logReport } from './reports.js';
import { RuntimeTracer } from './tracing.js';

export interface TelemetryOptions {
  /**
   * A logger to write through (any pino logger), options for a new root pino logger, or `false` for
   * none. Default: the process's default logger (JSON lines on stderr at `$MOLO_LOG_LEVEL`, else `info`).
   */
  readonly logger?: LoggerOption;
  /** Prometheus metrics in a registry of their own; default off. */
  readonly metrics?: boolean | MetricsOptions;
  /** Spans around calls and supervisor restarts through `@opentelemetry/api`; default off. */
  readonly tracing?: boolean;
}

/**
 * Logs, metrics and spans for one or more actor systems. It has the shape of the kernel's
 * `KernelObserver` (`spawned`, `exited`, `report`, `startSpan`) without importing the kernel: pass
 * it as the system's `observer`, and its `logger` as the system's `logger` (or spread
 * {@link Telemetry.systemOptions}).
 *
 * Reports are logged as one JSON line each, with fixed fields:
 * - `supervisor.child_terminated` (error), `supervisor.start_error` (error), `supervisor.shutdown`
 *   (error), `supervisor.child_restarted` (info): `event`, `supervisor` (ref), `supervisorName`,
 *   `childId`, `childSpecId`, `reason`, `restartCount` (and `cause` for a shutdown);
 * - `actor.crashed` (error), for every actor that exits with an error: `event`, `actor` (ref),
 *   `name`, `behaviour`, `reason`, `stack`.
 * At `debug`, `actor.spawned` and `actor.exited` (non-error exits) are logged too.
 */
export class Telemetry {
  readonly logger: Logger;
  readonly metrics: RuntimeMetrics | undefined;
  readonly tracer: RuntimeTracer | undefined;
  /**
   * Opens a span, or returns undefined when nothing records it. Undefined itself when tracing is
   * off, so the kernel, which checks for it once at construction, skips tracing altogether.
   */
  readonly startSpan: ((name: string, attributes: Readonly<Record<string, unknown>>) => TelemetrySpan | undefined) | undefined;

  constructor(options: TelemetryOptions = {}) {
    this.logger = resolveLogger(options.logger);
    this.metrics = options.metrics ? new RuntimeMetrics(options.metrics === true ? {} : options.metrics) : undefined;
    const tracer = (this.tracer = options.tracing ? new RuntimeTracer() : undefined);
    this.startSpan = tracer === undefined ? undefined : (name, attributes) => tracer.startSpan(name, attributes);
  }

  /** `{ observer, logger }`, to spread into the options of an `ActorSystem`. */
  get systemOptions(): { readonly observer: Telemetry; readonly logger: Logger } {
    return { observer: this, logger: this.logger };
  }

  spawned(actor: TelemetryActor): void {
    this.metrics?.actorSpawned(actor);
    if (this.logger.isLevelEnabled('debug')) this.logger.debug({ event: 'actor.spawned', ...describeActor(actor) }, 'actor.spawned');
  }

  exited(actor: TelemetryActor, reason: unknown): void {
    this.metrics?.actorExited(actor, reason);
    logExit(this.logger, actor, reason);
  }

  /** A behaviour's lifecycle event, such as a supervisor's crash report; logged and counted. */
  report(event: string, fields: Readonly<Record<string, unknown>>): void {
    this.metrics?.supervisorEvent(event, fields);
    logReport(this.logger, event, fields);
  }

  /**
   * Prometheus text of the metrics registry; empty when metrics are off. Bound, so it can be handed
   * on as is (the admin surface's `metrics` source).
   */
  readonly metricsText = (): Promise<string> => this.metrics?.metricsText() ?? Promise.resolve('');

  /** Writes out buffered log lines (a file destination buffers). */
  flush(): void {
    (this.logger as Logger & { flush?: () => void }).flush?.();
  }
}

/** Logs, metrics and tracing as asked: `createTelemetry({ logger: { level: 'info' }, metrics: true, tracing: true })`. */
export function createTelemetry(options: TelemetryOptions = {}): Telemetry {
  return new Telemetry(options);
}
