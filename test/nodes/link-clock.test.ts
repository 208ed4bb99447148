import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/index.js';
import { sleep } from '../support/systems.js';
import { rawPeer } from './raw-peer.js';
import { testNode } from './support.js';

// The node's links, dials and retries follow its system's clock: a SimulatedClock alone decides
// when a silent peer is down, and real time passing decides nothing.
describe('node links on the injected clock', () => {
  it('a silent peer is down when the simulated clock passes the detection time, and not before', async () => {
    const clock = new SimulatedClock();
    const a = await testNode('a', { detectionMs: 300, system: { logger: false, clock } });
    const peer = await rawPeer(a, 'mute@127.0.0.1:1');
    const downs: string[] = [];
    a.on('nodedown', (node, reason) => downs.push(`${node} ${reason}`));

    // Three times the detection time of real silence: the link stays up while the clock stands still.
    await sleep(900);
    expect(downs).toEqual([]);
    expect(a.isConnected(peer.name)).toBe(true);

    // Just short of it on the clock: still up (heartbeats tick every 75 ms of simulated time).
    await clock.advanceAsync(225);
    expect(a.isConnected(peer.name)).toBe(true);
    await clock.advanceAsync(150);
    await peer.closed;
    expect(downs).toEqual([`${peer.name} heartbeat`]);
  });

  it('a peer that answers is never timed out, however far the clock moves', async () => {
    const clock = new SimulatedClock();
    const a = await testNode('a', { detectionMs: 300, system: { logger: false, clock } });
    const peer = await rawPeer(a, 'chatty@127.0.0.1:1');
    const downs: string[] = [];
    a.on('nodedown', (node, reason) => downs.push(`${node} ${reason}`));
    for (let i = 0; i < 20; i++) {
      // Any record read is a sign of life: an empty one is the wire's heartbeat.
      peer.record(new Uint8Array(0));
      await sleep(5);
      await clock.advanceAsync(100);
    }
    expect(downs).toEqual([]);
    expect(a.isConnected(peer.name)).toBe(true);
    peer.socket.destroy();
  });

  it('a reconnect waits for the simulated clock', async () => {
    const clock = new SimulatedClock();
    const a = await testNode('a', { reconnectMinMs: 500, reconnectMaxMs: 500, system: { logger: false, clock } });
    const b = await testNode('b');
    await a.connect(b.name);
    const ups: string[] = [];
    a.on('nodeup', (node) => ups.push(node));
    a.links();
    // The peer drops the link; a keeps wanting it and redials after its backoff, on its clock.
    b.disconnect(a.name);
    await sleep(100);
    expect(a.isConnected(b.name)).toBe(false);
    await sleep(1_000);
    expect(ups).toEqual([]);
    await clock.advanceAsync(700);
    const deadline = Date.now() + 5_000;
    while (!a.isConnected(b.name) && Date.now() < deadline) await sleep(20);
    expect(ups).toEqual([b.name]);
  });
});
