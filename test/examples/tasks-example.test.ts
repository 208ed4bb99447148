import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples/tasks.ts', () => {
  it('enqueues in a transaction (one duplicate), retries the flaky task, dead-letters and redrives the broken one, stops cleanly', async () => {
    const result = await runScript('examples/tasks.ts', { timeoutMs: 60_000 });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('welcome for ada again: duplicate true');
    expect(result.stdout).toContain('sent welcome mail to ada@example.com');
    expect(result.stdout).toContain('sent digest on run 2');
    expect(result.stdout).toContain('dead letter: broken, reason permanent, attempts 1');
    expect(result.stdout).toContain('redriven: 1');
    expect(result.stdout).toContain('queue: depth 0, succeeded 2, dead letters 1');
    expect(result.stdout).toContain('pool: 2 workers, 2 succeeded, 3 failed runs');
    expect(result.stdout).toContain('actors left: 0');
  }, 90_000);
});
