/**
 * A TLS node under a connection flood: raw TCP sockets that never start TLS are counted from the
 * accept, so they meet the same slots, eviction and hello deadline as on a plain node, instead of
 * waiting for Node's own TLS deadline (120 s).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { NodeTlsOptions } from '../../src/nodes/index.js';
import { eventually } from '../support/systems.js';
import { connectsUnderFlood, flood } from './flood.js';
import { testNode } from './support.js';
import { authority } from './tls-certs.js';

let cluster: NodeTlsOptions;
beforeAll(() => {
  cluster = authority('cluster');
});

describe('a TLS node under a connection flood', () => {
  it('200 raw sockets that never start TLS, reopened in a loop: a TLS node still connects within 2 s, round after round', async () => {
    const a = await testNode('a', { tls: cluster });
    const attack = await flood(a, 200);
    const outcomes = await connectsUnderFlood(a, attack, { tls: cluster });
    const opened = attack.opened;
    attack.stop();
    console.info(`tls flood: legit connect times ${JSON.stringify(outcomes)}, attack opened ${opened} sockets, refusals ${JSON.stringify(a.stats().handshakesRefused)}`);
    for (const outcome of outcomes) expect(typeof outcome).toBe('number');
    expect(a.stats().handshakesRefused.evicted ?? 0).toBeGreaterThan(0);
    // Closed by the gate before TLS: counted as evicted, not as TLS failures.
    expect(a.stats().handshakesRefused.tls ?? 0).toBe(0);
  }, 25_000);

  it('300 raw sockets that never start TLS: at most maxPendingHandshakes stay open, and none past the hello deadline', async () => {
    const a = await testNode('a', { tls: cluster, helloDeadlineMs: 1_000 });
    const started = Date.now();
    const attack = await flood(a, 300, undefined, false);
    await eventually(() => attack.connected === 300, 5_000, 'the 300 sockets to connect');
    // Evicted from the accept on: no more than the 64 slots (default) are held.
    await eventually(() => attack.open <= 64, 5_000, 'the sockets over the slots to be evicted');
    // And the rest closed at the hello deadline, not Node's TLS deadline.
    await eventually(() => attack.open === 0, 6_000, 'every raw socket closed');
    console.info(`tls raw sockets: all 300 closed after ${Date.now() - started} ms`);
    expect(a.stats().handshakesRefused.timeout ?? 0).toBeGreaterThan(0);
  }, 20_000);
});
