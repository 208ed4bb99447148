/**
 * What a node's `/metrics` serves unless given a source of its own: the runtime's metrics (from
 * the system's telemetry when it has metrics, else sampled from the system by the built-in text),
 * Node's process metrics (prom-client's default collectors, once per process), the task and
 * stream metrics of the queue and store the admin serves, and any registries the application's
 * components report to (`metrics: registry` on a pool, a cache, a store).
 *
 * Each metric name appears once: a component already reporting to one of those registries is
 * attached there rather than to the admin's, and process metrics are left out of the admin's
 * registry when the telemetry's already collects them.
 */
import type { Registry } from 'prom-client';
import type { ActorSystem } from '../actors/index.js';
import { SqlStreamStore } from '../bus/streams/sql-store.js';
import { streamMetrics } from '../bus/streams/metrics.js';
import type { StreamStore } from '../bus/streams/store.js';
import type { TaskQueue } from '../bus/tasks/api.js';
import { taskMetrics, TaskTelemetry } from '../bus/tasks/metrics.js';
import { prom } from '../telemetry/lazy-modules.js';
import { Telemetry } from '../telemetry/telemetry.js';
import { unknownOptionKey } from '../actors/option-keys.js';
import { builtinMetrics } from './builtin-metrics.js';
import { AdminInvalidOption } from './errors.js';
import type { MetricsSource } from './http.js';

/** The default `/metrics` of a node, tuned: what to add to it, what to leave out. */
export interface NodeMetricsOptions {
  /** Registries the application's components report to (`metrics: registry`), served after the runtime's. */
  readonly registries?: readonly Registry[];
  /** Node's process metrics (`process_cpu_seconds_total`, `nodejs_eventloop_lag_seconds`, …); default true. */
  readonly process?: boolean;
}

const METRICS_KEYS: readonly (keyof NodeMetricsOptions)[] = ['registries', 'process'];

export interface NodeMetricsParts {
  readonly system: ActorSystem;
  readonly rootName: string;
  readonly tasks?: TaskQueue | undefined;
  readonly streams?: StreamStore | undefined;
  readonly options?: NodeMetricsOptions | undefined;
}

/** Checks `metrics` as startNode takes it: a source of the caller's, options for the default, or absent. */
export function checkNodeMetricsOption(metrics: unknown): void {
  if (metrics === undefined || typeof metrics === 'function') return;
  if (metrics === null || typeof metrics !== 'object') throw new AdminInvalidOption('metrics', 'must be a function returning the Prometheus text, or { registries?, process? }');
  const unknown = unknownOptionKey(metrics, METRICS_KEYS);
  if (unknown !== undefined) throw new AdminInvalidOption(`metrics.${unknown.key}`, unknown.detail);
  const { registries, process } = metrics as NodeMetricsOptions;
  if (registries !== undefined && (!Array.isArray(registries) || registries.some((r) => typeof (r as Partial<Registry> | null)?.metrics !== 'function'))) {
    throw new AdminInvalidOption('metrics.registries', 'must be an array of prom-client registries');
  }
  if (process !== undefined && typeof process !== 'boolean') throw new AdminInvalidOption('metrics.process', 'must be a boolean');
}

let processRegistry: Registry | undefined;

/**
 * Process metrics belong to the process, not to a node, and prom-client's collectors keep an
 * event-loop monitor running for good once made: they are collected once per process, in a
 * registry every node serves.
 */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new prom.Registry();
    prom.collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** The node's default metrics source. */
export function nodeMetrics(parts: NodeMetricsParts): MetricsSource {
  const observer = parts.system.observer;
  const runtime = observer instanceof Telemetry ? observer.metrics : undefined;
  const own: Registry = new prom.Registry();
  // The order served, and where a component already reporting somewhere is found.
  const registries = [...new Set([...(runtime === undefined ? [] : [runtime.registry]), ...(parts.options?.registries ?? [])])];
  const holding = (name: string): Registry => registries.find((registry) => registry.getSingleMetric(name) !== undefined) ?? own;
  if (parts.options?.process !== false && holding('process_cpu_user_seconds_total') === own) registries.push(processMetrics());
  registries.push(own);
  const telemetry = (parts.tasks as { telemetry?: unknown } | undefined)?.telemetry;
  if (telemetry instanceof TaskTelemetry) taskMetrics(holding('molo_task_transitions_total'))!.add(telemetry);
  if (parts.streams instanceof SqlStreamStore) streamMetrics(holding('molo_stream_published_total'))!.add(parts.streams);
  // Without telemetry's metrics, the runtime's gauges are sampled from the system at each scrape.
  const sampled = runtime === undefined ? builtinMetrics(parts.system, parts.rootName) : undefined;
  return async () => {
    const texts = await Promise.all(registries.map((registry) => registry.metrics()));
    return (sampled === undefined ? '' : await sampled()) + texts.map((text) => (text === '' || text.endsWith('\n') ? text : `${text}\n`)).join('');
  };
}
