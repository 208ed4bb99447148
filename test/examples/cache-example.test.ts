import { describe, it } from 'vitest';
import { expectCleanRun } from '../support/example-output.js';
import { runScript } from '../support/run-script.js';

describe('examples/cache.ts', () => {
  it('caches ORM reads with singleflight, negative entries, tags and write-event invalidation', async () => {
    const result = await runScript('examples/cache.ts', { env: { MOLO_LOG_LEVEL: 'warn' } });
    expectCleanRun(result, [
      'three concurrent misses: Ada, Ada, Ada, loaded 1 time(s)',
      'synchronous hit: Ada',
      'missing user 999 cached as a miss: true, loads so far 2',
      'after update, cached: false, reloaded: Ada Lovelace',
      'purged 1; stats: hits 2, misses 6, computes 3, coalesced 2, invalidations 3',
    ]);
  });
});
