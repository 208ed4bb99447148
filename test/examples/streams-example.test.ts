import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples/streams.ts', () => {
  it('publishes (one duplicate), bills every order once, redelivers the failed one, retains, stops cleanly', async () => {
    const result = await runScript('examples/streams.ts', { timeoutMs: 60_000 });
    // The one deliberate failure is logged (pino JSON on stderr) as a warning, and nothing else is.
    const logged = result.stderr.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { event?: string; level: number });
    expect(logged.map((entry) => [entry.event, entry.level])).toEqual([['stream.handler_failed', 40]]);
    expect(result.code).toBe(0);
    for (let id = 1; id <= 4; id++) expect(result.stdout).toContain(`published order ${id} as seq ${id}`);
    expect(result.stdout).toContain('order 2 again: duplicate true, seq 2');
    expect(result.stdout).toMatch(/billed order 3 \(plums\), seq 3, delivery 2/);
    expect(result.stdout.match(/billed order/g)).toHaveLength(4);
    expect(result.stdout).toContain('consumer billing: ack floor 4, pending 0, lag 0');
    expect(result.stdout).toContain('status: acked 4, failed 1');
    expect(result.stdout).toContain('stream: last seq 4');
    expect(result.stdout).toContain('actors left: 0');
  }, 90_000);
});
