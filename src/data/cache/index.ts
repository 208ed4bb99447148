// The in-process cache: sync hits, singleflight computes, TTLs, tags, LRU caps, invalidation from write events.
export { Cache, ENTRY_OVERHEAD_BYTES, type CacheSetOptions, type CacheStats, type GetOrComputeOptions } from './cache.js';
export { CACHE_DEFAULTS, CACHE_LIMITS, type CacheOptions } from './options.js';
export { estimateSize, MAX_ESTIMATED_VALUES } from './size.js';
export { rowTag, tableAndRowTags, tableTag, type Invalidation, type WriteEvent, type WriteEventSource, type WriteOp } from './invalidation.js';
