import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples/topics.ts', () => {
  it('delivers to a callback and a pattern-subscribed actor, and counts the unrouted publish', async () => {
    const result = await runScript('examples/topics.ts', { env: { MOLO_LOG_LEVEL: 'warn' } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain('published to 2 subscription(s)');
    expect(out).toContain('callback: order 42 (tea) on orders:created');
    // publish returns before any subscriber runs
    expect(out.indexOf('published to 2')).toBeLessThan(out.indexOf('callback: order 42'));
    expect(out).toContain('auditor: orders:created via orders:*: {"id":42,"item":"tea"}');
    expect(out).toContain('auditor: orders:shipped via orders:*: order 42 left the warehouse');
    expect(out).toContain('auditor: orders:created via orders:*: {"id":43,"item":"coffee"}');
    expect(out).not.toContain('callback: order 43'); // unsubscribed
    expect(out).toContain('lost: true; published 4, unrouted 1, dropped 0');
  });
});
