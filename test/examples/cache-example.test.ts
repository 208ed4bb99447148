import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

// Info lines (sqlite.opened) go to stderr; anything at warn or above there is a failure.
const QUIET = { MOLO_LOG_LEVEL: 'warn' };

describe('examples/cache.ts', () => {
  it('caches ORM reads with singleflight, negative entries, tags and write-event invalidation', async () => {
    const result = await runScript('examples/cache.ts', { env: QUIET });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('three concurrent misses: Ada, Ada, Ada, loaded 1 time(s)');
    expect(result.stdout).toContain('synchronous hit: Ada');
    expect(result.stdout).toContain('missing user 999 cached as a miss: true, loads so far 2');
    expect(result.stdout).toContain('after update, cached: false, reloaded: Ada Lovelace');
    expect(result.stdout).toContain('purged 1; stats: hits 2, misses 6, computes 3, coalesced 2, invalidations 3');
  });
});
