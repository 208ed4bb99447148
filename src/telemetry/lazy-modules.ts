/**
 * The telemetry libraries, loaded on first use rather than at import. Together they cost most of
 * `import 'molo'` (prom-client, pino and `@opentelemetry/api` are each larger than the kernel), and a
 * program that turns metrics or tracing off never needs them. All three ship CommonJS, so a
 * synchronous `require` loads them where a constructor needs them. `@opentelemetry/api` keeps its
 * registered SDK on `globalThis`, so its CommonJS copy sees what an ESM caller registered.
 */
import { createRequire } from 'node:module';

type PromClient = typeof import('prom-client');
type Pino = typeof import('pino');
type OtelApi = typeof import('@opentelemetry/api');
type PinoPretty = typeof import('pino-pretty');

const require = createRequire(import.meta.url);
let promClient: PromClient | undefined;
let pino: Pino | undefined;
let otel: OtelApi | undefined;
let pinoPretty: PinoPretty | undefined;

/** prom-client's classes: `new prom.Counter({...})` loads the library the first time. */
export const prom = {
  get Counter(): PromClient['Counter'] {
    return (promClient ??= require('prom-client') as PromClient).Counter;
  },
  get Gauge(): PromClient['Gauge'] {
    return (promClient ??= require('prom-client') as PromClient).Gauge;
  },
  get Histogram(): PromClient['Histogram'] {
    return (promClient ??= require('prom-client') as PromClient).Histogram;
  },
  get Registry(): PromClient['Registry'] {
    return (promClient ??= require('prom-client') as PromClient).Registry;
  },
  get collectDefaultMetrics(): PromClient['collectDefaultMetrics'] {
    return (promClient ??= require('prom-client') as PromClient).collectDefaultMetrics;
  },
};

export function pinoModule(): Pino {
  return (pino ??= require('pino') as Pino);
}

export function otelApi(): OtelApi {
  return (otel ??= require('@opentelemetry/api') as OtelApi);
}

/** pino-pretty, loaded only for a logger that pretty-prints (the default one, on a terminal in development). */
export function pinoPrettyModule(): PinoPretty {
  return (pinoPretty ??= require('pino-pretty') as PinoPretty);
}
