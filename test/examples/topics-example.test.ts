import { describe, expect, it } from 'vitest';
import { expectCleanRun } from '../support/example-output.js';
import { runScript } from '../support/run-script.js';

describe('examples/topics.ts', () => {
  it('delivers to a callback and a pattern-subscribed actor, and counts the unrouted publish', async () => {
    const result = await runScript('examples/topics.ts', { env: { MOLO_LOG_LEVEL: 'warn' } });
    // publish returns before any subscriber runs, so its line comes first.
    expectCleanRun(result, ['published to 2 subscription(s)', 'callback: order 42 (tea) on orders:created']);
    expectCleanRun(result, [
      'auditor: orders:created via orders:*: {"id":42,"item":"tea"}',
      'auditor: orders:shipped via orders:*: order 42 left the warehouse',
      'auditor: orders:created via orders:*: {"id":43,"item":"coffee"}',
      'lost: true; published 4, unrouted 1, dropped 0',
    ]);
    expect(result.stdout).not.toContain('callback: order 43'); // unsubscribed before it was published
  });
});
