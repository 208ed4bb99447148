/**
 * Cluster-wide topics across nodes in their own OS processes: a publish on one node reaches the
 * local subscribers of every node once (no loops), and a publish the broker refuses sends nothing.
 */
import { describe, expect, it } from 'vitest';
import { sleep } from '../support/systems.js';
import { mesh, until } from './cluster-child.js';

describe('cluster topics', () => {
  it('a publish on any node is seen once by the subscribers of every node', async () => {
    const peers = await mesh(['ta', 'tb', 'tc']);
    for (const peer of peers) {
      await peer.run('spawn', 's');
      await peer.run('subscribe', 'news:today', 's');
    }
    await peers[0]!.run('publish', 'news:today', 'from a');
    await peers[1]!.run('publish', 'news:today', 'from b');
    await peers[2]!.run('publish', 'news:other', 'nobody listens');
    for (const peer of peers) await until(async () => (await peer.run<unknown[]>('topicMessages')).length === 2);
    // Nothing more arrives: no echo, no loop.
    await sleep(300);
    for (const peer of peers) {
      const messages = await peer.run<{ channel: string; text: string }[]>('topicMessages');
      expect(messages.map((message) => message.text).sort()).toEqual(['from a', 'from b']);
    }
    expect(await peers[0]!.run('topicStats')).toEqual({ published: 1, forwarded: 2, received: 2, rejected: 0 });
    const metrics = await peers[0]!.run<string>('metrics');
    expect(metrics).toContain(`molo_cluster_topic_messages_total{node="${peers[0]!.name}",kind="forwarded"} 2`);
    expect(metrics).toContain(`molo_cluster_topic_messages_total{node="${peers[0]!.name}",kind="received"} 2`);
    await expect(peers[0]!.run('publish', 'bad*channel', 'x')).rejects.toMatchObject({ code: expect.stringMatching(/^TOPIC_/) });
    expect(await peers[0]!.run('topicStats')).toMatchObject({ published: 1, forwarded: 2 });
  });
});
