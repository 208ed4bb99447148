import { describe, expect, it } from 'vitest';
import { placementHub } from '../../../src/actors/placement/hub.js';
import { ask, checkPlacementLeaks, HOST_PLACEMENTS, killAll, placementSystem, spawnProbe } from './support.js';

checkPlacementLeaks();

/** A host may be started with a frame cap above the system's, for messages larger than the rest. */
describe('payloadLimitBytes of a host', () => {
  for (const placement of HOST_PLACEMENTS) {
    it(`a ${placement} host with a larger cap takes and returns messages over the system's cap`, async () => {
      const system = placementSystem({ payloadLimitBytes: 64 * 1024 });
      const big = await spawnProbe(system, placement, { payloadLimitBytes: 256 * 1024 });
      const small = await spawnProbe(system, placement);
      const text = 'é€'.repeat(30_000); // 150,000 UTF-8 bytes
      expect(await ask(system, big, { echo: text })).toBe(text);
      await expect(ask(system, small, { echo: text })).rejects.toMatchObject({ code: 'PLACEMENT_PAYLOAD_TOO_LARGE', limitBytes: 64 * 1024 });
      await expect(ask(system, big, { echo: 'x'.repeat(300 * 1024) })).rejects.toMatchObject({
        code: 'PLACEMENT_PAYLOAD_TOO_LARGE',
        limitBytes: 256 * 1024,
      });
      // From the large host to the small one: refused by the hub, typed, and the small host stays.
      const forwarded = await ask<{ error?: string; reason?: unknown }>(system, big, { call: small, request: { echo: text }, timeoutMs: 5_000 });
      expect(forwarded.error).toBe('PLACEMENT_PAYLOAD_TOO_LARGE');
      expect(await ask(system, small, 'ping')).toBe('pong');
      expect(placementHub(system).stats.channelViolations).toBe(0);
      await killAll(system, big, small);
    });
  }

  it('is checked: an integer up to MAX_PAYLOAD_LIMIT_BYTES, for hosts only; never below the system cap', async () => {
    const system = placementSystem({ payloadLimitBytes: 64 * 1024 });
    const low = await spawnProbe(system, 'thread', { payloadLimitBytes: 1024 });
    expect(await ask(system, low, { echo: 'x'.repeat(32 * 1024) })).toHaveLength(32 * 1024);
    await killAll(system, low);
    for (const bad of [0, 1.5 * 1024 * 1024 + 0.5, 65 * 1024 * 1024]) {
      await expect(spawnProbe(system, 'thread', { payloadLimitBytes: bad })).rejects.toMatchObject({
        code: 'PLACEMENT_INVALID',
        option: 'payloadLimitBytes',
      });
    }
    await expect(spawnProbe(system, 'loop', { payloadLimitBytes: 128 * 1024 })).rejects.toMatchObject({
      code: 'PLACEMENT_INVALID',
      option: 'payloadLimitBytes',
    });
  });
});
