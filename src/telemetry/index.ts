// Telemetry: the lowest layer, imported by all; it never imports src/actors or src/behaviours.
export {
  chooseLogFormat,
  createLogger,
  defaultLogger,
  envLogLevel,
  LOG_FORMAT_ENV,
  LOG_LEVEL_ENV,
  resolveLogger,
  type LogDestination,
  type LogFormat,
  type LoggerOption,
  type LoggerOptions,
} from './logger.js';
export { REPORT_LEVELS } from './reports.js';
export { silentLogger, type LogFn, type Logger, type LogLevel } from './logger-api.js';
export { RuntimeMetrics, type MetricsOptions } from './metrics.js';
export { carrierOf, RuntimeTracer, SpanName, TRACER_NAME } from './tracing.js';
export { currentCarrier, parseCarrier, withCarrier, type TraceCarrier } from './trace-context.js';
export { createTelemetry, Telemetry, type TelemetryOptions } from './telemetry.js';
export {
  classifyExit,
  EXIT_CLASSES,
  type ActorSample,
  type ExitClass,
  type TelemetryActor,
  type TelemetrySpan,
} from './actor-shape.js';
