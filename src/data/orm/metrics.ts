/**
 * The ORM's few metrics, registered once per prom-client registry; without a registry there are
 * none and each call site pays one `undefined` check.
 */
import type { Counter, Registry } from 'prom-client';
import { prom } from '../../telemetry/lazy-modules.js';

export class OrmMetrics {
  readonly conflicts: Counter<'table'>;
  readonly heals: Counter<'table' | 'outcome'>;
  readonly listenerErrors: Counter;

  constructor(registry: Registry, prefix = 'molo_') {
    const registers = [registry];
    this.conflicts = new prom.Counter({ name: `${prefix}orm_conflicts_total`, help: 'Optimistic-lock conflicts (stale writes refused).', labelNames: ['table'], registers });
    this.heals = new prom.Counter({ name: `${prefix}orm_heal_retries_total`, help: 'Statements retried after a heal, by outcome (ok, failed).', labelNames: ['table', 'outcome'], registers });
    this.listenerErrors = new prom.Counter({ name: `${prefix}orm_event_listener_errors_total`, help: 'Write-event subscribers that threw.', registers });
  }
}

const byRegistry = new WeakMap<Registry, OrmMetrics>();

export function ormMetrics(registry: Registry | undefined): OrmMetrics | undefined {
  if (registry === undefined) return undefined;
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) byRegistry.set(registry, (metrics = new OrmMetrics(registry)));
  return metrics;
}
