import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

// Info lines (sqlite.opened) go to stderr; anything at warn or above there is a failure.
const QUIET = { MOLO_LOG_LEVEL: 'warn' };

describe('examples/kv.ts', () => {
  it('runs the same KV code in memory and on SQLite', async () => {
    const result = await runScript('examples/kv.ts', { env: QUIET });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    for (const backend of ['memory', 'sqlite']) {
      expect(result.stdout).toContain(`${backend}: versions grow true, user:1 = ada`);
      expect(result.stdout).toContain(`${backend}: cfg.retries = 3`);
      expect(result.stdout).toContain(`${backend}: scan user:1,user:2 | user:3 (last page: true)`);
      expect(result.stdout).toContain(`${backend}: session after its TTL exists: false`);
      expect(result.stdout).toContain(`${backend}: lease taken true, second taker false, renewed true, released true`);
    }
  });
});
