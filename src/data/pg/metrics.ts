/**
 * Per-connection query telemetry, when a prom-client registry is configured: a latency histogram
 * (from write to ReadyForQuery) and an error counter by Molo error code. Without a registry the
 * connection checks one `undefined` per statement and does nothing else.
 */
import type { Counter, Histogram, Registry } from 'prom-client';
import { prom } from '../../telemetry/lazy-modules.js';
import type { Op } from './ops.js';

export interface PgMetrics {
  /** One statement done, `ms` after it was written. */
  observe(op: Op, ms: number): void;
}

class RegistryMetrics implements PgMetrics {
  readonly #duration: Histogram;
  readonly #errors: Counter<'code'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#duration = new prom.Histogram({
      name: 'molo_pg_statement_duration_seconds',
      help: 'Postgres statement latency on its connection, from write to ReadyForQuery (pipelined statements include their wait).',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
      registers,
    });
    this.#errors = new prom.Counter({ name: 'molo_pg_statement_errors_total', help: 'Postgres statements that failed, by error code.', labelNames: ['code'], registers });
  }

  observe(op: Op, ms: number): void {
    this.#duration.observe(ms / 1000);
    if (op.error !== null) this.#errors.inc({ code: op.error.code });
  }
}

const byRegistry = new WeakMap<Registry, PgMetrics>();

export function pgMetrics(registry: Registry | undefined): PgMetrics | undefined {
  if (registry === undefined) return undefined;
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) byRegistry.set(registry, (metrics = new RegistryMetrics(registry)));
  return metrics;
}
