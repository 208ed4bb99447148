/**
 * The caches' Prometheus metrics, registered once per prom-client registry and labelled by cache
 * name. A cache without a registry holds no children and pays one `undefined` check per event.
 */
import type { Counter, Gauge, Registry } from 'prom-client';
import { prom } from '../../telemetry/lazy-modules.js';

export type EvictionReason = 'lru' | 'expired' | 'invalidated';

class CacheMetricFamilies {
  readonly hits: Counter<'cache'>;
  readonly misses: Counter<'cache'>;
  readonly evictions: Counter<'cache' | 'reason'>;
  readonly entries: Gauge<'cache'>;
  readonly bytes: Gauge<'cache'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.hits = new prom.Counter({ name: 'molo_cache_hits_total', help: 'Cache lookups answered from the cache (negative entries included).', labelNames: ['cache'], registers });
    this.misses = new prom.Counter({ name: 'molo_cache_misses_total', help: 'Cache lookups that found nothing fresh.', labelNames: ['cache'], registers });
    this.evictions = new prom.Counter({
      name: 'molo_cache_evictions_total',
      help: 'Entries removed by reason: lru (over maxEntries/maxBytes), expired, invalidated (key, tag, write event).',
      labelNames: ['cache', 'reason'],
      registers,
    });
    this.entries = new prom.Gauge({ name: 'molo_cache_entries', help: 'Entries held.', labelNames: ['cache'], registers });
    this.bytes = new prom.Gauge({ name: 'molo_cache_bytes', help: 'Estimated bytes held.', labelNames: ['cache'], registers });
  }
}

const byRegistry = new WeakMap<Registry, CacheMetricFamilies>();

/** One cache's metric children. */
export class CacheMetrics {
  readonly hit: Counter.Internal;
  readonly miss: Counter.Internal;
  readonly #evictions: Record<EvictionReason, Counter.Internal>;
  readonly #entries: Gauge.Internal<'cache'>;
  readonly #bytes: Gauge.Internal<'cache'>;

  constructor(registry: Registry, name: string) {
    let families = byRegistry.get(registry);
    if (families === undefined) byRegistry.set(registry, (families = new CacheMetricFamilies(registry)));
    this.hit = families.hits.labels(name);
    this.miss = families.misses.labels(name);
    this.#evictions = {
      lru: families.evictions.labels(name, 'lru'),
      expired: families.evictions.labels(name, 'expired'),
      invalidated: families.evictions.labels(name, 'invalidated'),
    };
    this.#entries = families.entries.labels(name);
    this.#bytes = families.bytes.labels(name);
  }

  evicted(reason: EvictionReason): void {
    this.#evictions[reason].inc();
  }

  size(entries: number, bytes: number): void {
    this.#entries.set(entries);
    this.#bytes.set(bytes);
  }
}
