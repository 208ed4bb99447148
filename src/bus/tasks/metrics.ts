/**
 * The task queue's telemetry (R7-6). Every state change goes through {@link TaskTelemetry.transition}:
 * a debug log line, the `transition` event and a plain-number count that the Prometheus counter
 * reads at scrape time (as the stream metrics do), so a queue without a registry or logger pays a
 * Map increment per change.
 *
 * - `molo_task_transitions_total{queue,from,to}`: task state changes.
 * - `molo_task_lease_expiries_total{queue}`: leases that ran out without an ack.
 * - `molo_task_queue_depth{queue}`, `molo_task_dead_letters{queue}`: from the last `queueInfo`
 *   (worker pools refresh it every few seconds).
 * - `molo_task_in_flight{queue}`: handlers running in this process's worker pools.
 * - `molo_task_host_boots_total{queue,outcome}`: thread or process hosts of this process's worker
 *   pools that booted (`ok`: up with the handlers module loaded) or failed to; restarts included.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../../telemetry/index.js';
import type { TaskFailureReason, TaskQueueEvents } from './api.js';
import type { TaskState } from './lifecycle.js';

export interface TaskTelemetryOptions {
  readonly metrics?: Registry;
  readonly logger?: Logger;
  readonly events?: TaskQueueEvents;
}

/** What one queue store (or worker pool) reports to the metrics. */
export interface MeteredTasks {
  readonly transitions: ReadonlyMap<string, number>;
  readonly expiries: ReadonlyMap<string, number>;
  readonly depth: ReadonlyMap<string, number>;
  readonly deadLetters: ReadonlyMap<string, number>;
  readonly inFlight: ReadonlyMap<string, number>;
  /** `queue \0 outcome` → count. */
  readonly hostBoots: ReadonlyMap<string, number>;
}

export class TaskTelemetry implements MeteredTasks {
  /** `queue \0 from \0 to` → count. */
  readonly transitions = new Map<string, number>();
  readonly expiries = new Map<string, number>();
  readonly depth = new Map<string, number>();
  readonly deadLetters = new Map<string, number>();
  readonly inFlight = new Map<string, number>();
  readonly hostBoots = new Map<string, number>();

  constructor(private readonly options: TaskTelemetryOptions = {}) {
    taskMetrics(options.metrics)?.add(this);
  }

  transition(queue: string, id: string, from: TaskState, to: TaskState, reason?: TaskFailureReason): void {
    const key = `${queue}\u0000${from}\u0000${to}`;
    this.transitions.set(key, (this.transitions.get(key) ?? 0) + 1);
    this.options.logger?.debug({ event: 'task.transition', queue, id, from, to, ...(reason === undefined ? {} : { reason }) }, 'task state change');
    const handler = this.options.events?.transition;
    if (handler === undefined) return;
    try {
      handler(reason === undefined ? { queue, id, from, to } : { queue, id, from, to, reason });
    } catch (error) {
      this.options.logger?.error({ event: 'task.event_handler_failed', err: error }, 'a task event handler threw');
    }
  }

  hostBooted(queue: string, ok: boolean): void {
    const key = `${queue}\u0000${ok ? 'ok' : 'failed'}`;
    this.hostBoots.set(key, (this.hostBoots.get(key) ?? 0) + 1);
  }

  expired(queue: string, count: number): void {
    this.expiries.set(queue, (this.expiries.get(queue) ?? 0) + count);
  }

  evicted(queue: string, id: string, cause: 'age' | 'count'): void {
    this.options.logger?.info({ event: 'task.dead_letter_evicted', queue, id, cause }, 'dead letter evicted');
    try {
      this.options.events?.deadLetterEvicted?.({ queue, id, cause });
    } catch (error) {
      this.options.logger?.error({ event: 'task.event_handler_failed', err: error }, 'a task event handler threw');
    }
  }
}

export class TaskMetrics {
  readonly #sources = new Set<MeteredTasks>();

  constructor(registry: Registry, prefix = 'molo_') {
    const registers = [registry];
    const sources = this.#sources;
    new Counter({
      name: `${prefix}task_transitions_total`,
      help: 'Task state changes, by queue and from/to state.',
      labelNames: ['queue', 'from', 'to'],
      registers,
      collect() {
        this.reset();
        for (const source of sources) {
          for (const [key, count] of source.transitions) {
            const [queue, from, to] = key.split('\u0000') as [string, string, string];
            this.inc({ queue, from, to }, count);
          }
        }
      },
    });
    new Counter({
      name: `${prefix}task_lease_expiries_total`,
      help: 'Task leases that ran out without an ack (the worker died or hung).',
      labelNames: ['queue'],
      registers,
      collect() {
        this.reset();
        for (const source of sources) for (const [queue, count] of source.expiries) this.inc({ queue }, count);
      },
    });
    new Counter({
      name: `${prefix}task_host_boots_total`,
      help: 'Thread or process hosts of worker pools that booted (outcome ok: handlers module loaded) or failed to, restarts included.',
      labelNames: ['queue', 'outcome'],
      registers,
      collect() {
        this.reset();
        for (const source of sources) {
          for (const [key, count] of source.hostBoots) {
            const [queue, outcome] = key.split('\u0000') as [string, string];
            this.inc({ queue, outcome }, count);
          }
        }
      },
    });
    for (const [field, name, help] of [
      ['depth', 'task_queue_depth', 'Tasks queued, leased, running or waiting to retry (at the last look).'],
      ['deadLetters', 'task_dead_letters', 'Tasks in the dead-letter queue (at the last look).'],
      ['inFlight', 'task_in_flight', 'Task handlers running in this process.'],
    ] as const) {
      new Gauge({
        name: `${prefix}${name}`,
        help,
        labelNames: ['queue'],
        registers,
        collect() {
          this.reset();
          for (const source of sources) for (const [queue, value] of source[field]) this.inc({ queue }, value);
        },
      });
    }
  }

  add(source: MeteredTasks): void {
    this.#sources.add(source);
  }

  remove(source: MeteredTasks): void {
    this.#sources.delete(source);
  }
}

const byRegistry = new WeakMap<Registry, TaskMetrics>();

/** The task metrics of `registry`, created on first use; undefined without a registry. */
export function taskMetrics(registry: Registry | undefined): TaskMetrics | undefined {
  if (registry === undefined) return undefined;
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) byRegistry.set(registry, (metrics = new TaskMetrics(registry)));
  return metrics;
}
