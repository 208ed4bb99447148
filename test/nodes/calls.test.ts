/**
 * Calls served for a remote node (settled by callbacks, not a promise): the caller's timeout holds
 * exactly, the served call times out on the callee's side too, and a late reply is dropped without
 * harm to the link.
 */
import { describe, expect, it } from 'vitest';
import { CallRequest, CallTimeout } from '../../src/actors/index.js';
import { eventually } from '../support/systems.js';
import { testNode } from './support.js';

describe('remote calls', () => {
  it('a callee that answers late: the caller fails at its timeout, the late reply is dropped, the link serves on', async () => {
    const a = await testNode('a');
    const b = await testNode('b');
    await a.connect(b.name);
    const slow = b.system.spawn((message) => {
      if (!(message instanceof CallRequest)) return;
      const request = message.request as { delayMs: number; value: string };
      setTimeout(() => message.reply(request.value), request.delayMs);
    });
    const timeoutMs = 150;
    const started = performance.now();
    const error = await a.system.call(slow, { delayMs: 400, value: 'late' }, timeoutMs).catch((caught: unknown) => caught);
    const waited = performance.now() - started;
    expect(error).toBeInstanceOf(CallTimeout);
    expect((error as CallTimeout).target).toBe(slow);
    expect(waited).toBeGreaterThanOrEqual(timeoutMs - 1);
    expect(waited).toBeLessThan(400);
    // The late reply arrives and is dropped; the next call on the same link is answered.
    const received = a.stats().bytesReceived;
    await eventually(() => a.stats().bytesReceived > received);
    expect(await a.system.call(slow, { delayMs: 0, value: 'on time' })).toBe('on time');
  });
});
