/**
 * The data layer's Prometheus metrics, registered once per prom-client registry. Absent registry,
 * absent metrics: every call site checks for `undefined` once and pays nothing else.
 */
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { prom } from '../telemetry/lazy-modules.js';

export class DataMetrics {
  readonly poolConnections: Gauge<'pool' | 'state'>;
  readonly poolWaiting: Gauge<'pool'>;
  readonly poolExhausted: Counter<'pool'>;
  readonly poolAcquireTimeouts: Counter<'pool'>;
  readonly poolConnectFailures: Counter<'pool'>;
  readonly queryDuration: Histogram<'backend'>;
  readonly sqliteBusy: Counter<'file'>;
  readonly sqliteCheckpoints: Counter<'file' | 'result'>;

  constructor(registry: Registry, prefix = 'molo_') {
    const registers = [registry];
    this.poolConnections = new prom.Gauge({ name: `${prefix}pool_connections`, help: 'Pool connections by state (idle, busy, leased).', labelNames: ['pool', 'state'], registers });
    this.poolWaiting = new prom.Gauge({ name: `${prefix}pool_waiting`, help: 'Callers waiting for a checkout.', labelNames: ['pool'], registers });
    this.poolExhausted = new prom.Counter({ name: `${prefix}pool_exhausted_total`, help: 'Checkouts refused because maxWaiters callers were already waiting.', labelNames: ['pool'], registers });
    this.poolAcquireTimeouts = new prom.Counter({ name: `${prefix}pool_acquire_timeouts_total`, help: 'Checkouts that timed out.', labelNames: ['pool'], registers });
    this.poolConnectFailures = new prom.Counter({ name: `${prefix}pool_connect_failures_total`, help: 'Failed connection attempts.', labelNames: ['pool'], registers });
    this.queryDuration = new prom.Histogram({
      name: `${prefix}query_duration_seconds`,
      help: 'Statement latency as the caller saw it.',
      labelNames: ['backend'],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
      registers,
    });
    this.sqliteBusy = new prom.Counter({ name: `${prefix}sqlite_busy_total`, help: 'SQLITE_BUSY that persisted through busy_timeout and retries.', labelNames: ['file'], registers });
    this.sqliteCheckpoints = new prom.Counter({ name: `${prefix}sqlite_checkpoints_total`, help: 'WAL checkpoints by result (ok, busy, failed).', labelNames: ['file', 'result'], registers });
  }
}

const byRegistry = new WeakMap<Registry, DataMetrics>();

/** The data metrics of `registry`, created on first use; undefined when no registry is given. */
export function dataMetrics(registry: Registry | undefined): DataMetrics | undefined {
  if (registry === undefined) return undefined;
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) byRegistry.set(registry, (metrics = new DataMetrics(registry)));
  return metrics;
}
