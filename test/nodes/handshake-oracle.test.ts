/**
 * Before a peer proves the cluster secret, the node's answer to a hello says nothing about who is
 * linked or allowed: a name already linked, a name not in `allow` and any other name all get the
 * same challenge, at once; refusals for those reasons come only after the proof.
 */
import { describe, expect, it } from 'vitest';
import { rawHello, rawPeer } from './raw-peer.js';
import { testNode } from './support.js';

describe('the hello answer does not list the cluster', () => {
  it('a hello naming a linked node is answered exactly like one naming a stranger', async () => {
    const a = await testNode('a');
    const b = await testNode('b');
    await b.connect(a.name);
    const linked = await rawHello(a, b.name);
    const stranger = await rawHello(a, 'stranger@127.0.0.1:1');
    console.info(`hello oracle: linked name → ${linked.kind} (${linked.bytes} B, ${linked.ms} ms), stranger → ${stranger.kind} (${stranger.bytes} B, ${stranger.ms} ms)`);
    expect(linked.kind).toBe('challenge');
    expect(stranger.kind).toBe('challenge');
    expect(linked.bytes).toBe(stranger.bytes);
    // Same timing class: both answered at once, neither held to a deadline.
    expect(Math.max(linked.ms, stranger.ms)).toBeLessThan(2_000);
    // With the secret, the duplicate is still refused, after the proof.
    await expect(rawPeer(a, b.name)).rejects.toMatchObject({ reason: 'duplicate' });
    expect(a.isConnected(b.name)).toBe(true);
  });

  it('with allow set, a name outside it is answered like one inside it until the proof', async () => {
    const a = await testNode('a', { allow: ['friend@127.0.0.1:1'] });
    const friend = await rawHello(a, 'friend@127.0.0.1:1');
    const outsider = await rawHello(a, 'outsider@127.0.0.1:1');
    expect([friend.kind, outsider.kind]).toEqual(['challenge', 'challenge']);
    expect(friend.bytes).toBe(outsider.bytes);
    await expect(rawPeer(a, 'outsider@127.0.0.1:1')).rejects.toMatchObject({ reason: 'unknown' });
  });
});
