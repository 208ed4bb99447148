/**
 * V7-5, as the spec words it: publish 10,000 stream messages, disconnect a consumer mid-way,
 * reconnect, assert zero loss and zero gaps in sequence numbers; an ephemeral topic subscriber that
 * was offline receives nothing sent meanwhile. On both stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenServer } from '../../../src/behaviours/index.js';
import { createBroker, StreamConsumer } from '../../../src/bus/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { STREAM_BACKENDS } from './stores.js';

const TOTAL = 10_000;

describe.each(STREAM_BACKENDS)('V7-5 on $name', (backend) => {
  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown(), 30_000);

  it('a consumer disconnected mid-way loses nothing; an offline topic subscriber gets nothing sent meanwhile', async () => {
    const system = testSystem();
    const store = await backend.open(undefined, { pollIntervalMs: 50 });
    const broker = createBroker({ system });
    try {
      await store.createStream('v75');
      const handled = new Map<number, number>();
      const start = () =>
        StreamConsumer.start(system, {
          store,
          stream: 'v75',
          consumer: 'durable',
          batch: 200,
          pollWaitMs: 100,
          handler: (delivery) => {
            handled.set(delivery.seq, (handled.get(delivery.seq) ?? 0) + 1);
          },
        });
      const topicSeen: number[] = [];
      let subscription = broker.subscribe('v75', (message) => void topicSeen.push(Number(message.text())));

      const seqs: number[] = [];
      const publish = async (from: number, to: number) => {
        for (let i = from; i < to; i += 500) {
          const batch = Array.from({ length: Math.min(500, to - i) }, (_, k) => i + k);
          const acks = await Promise.all(batch.map((n) => store.publish('v75', Buffer.from(String(n)))));
          seqs.push(...acks.map((ack) => ack.seq));
          for (const n of batch) broker.publish('v75', Buffer.from(String(n)));
        }
      };

      let consumer = await start();
      await publish(0, TOTAL / 2);
      await eventually(() => handled.size > TOTAL / 4, 30_000, 'a quarter handled');
      // Disconnect mid-way: the consumer actor and the topic subscriber go offline.
      await GenServer.stop(system, consumer, 'shutdown');
      subscription.unsubscribe();
      const offlineFrom = TOTAL / 2;
      await publish(TOTAL / 2, TOTAL);
      const handledWhileOffline = handled.size;
      // Reconnect.
      subscription = broker.subscribe('v75', (message) => void topicSeen.push(Number(message.text())));
      consumer = await start();
      await eventually(() => handled.size === TOTAL, 60_000, 'every message handled');
      await eventually(() => store.counts.get('v75')!.acked >= TOTAL, 10_000, 'every message acked');
      await GenServer.stop(system, consumer, 'shutdown');

      // Zero gaps: the publishes resolved with 1..10,000, and the stream's last sequence is 10,000.
      expect(seqs).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1));
      expect((await store.streamInfo('v75')).lastSeq).toBe(TOTAL);
      // Zero loss: every sequence reached the handler; nothing pending, the ack floor at the end.
      expect([...handled.keys()].sort((a, b) => a - b)).toEqual(seqs);
      expect(handledWhileOffline).toBeLessThan(TOTAL);
      expect(await store.consumerInfo('v75', 'durable')).toMatchObject({ ackFloor: TOTAL, pending: 0, lag: 0 });
      // The ephemeral tier: nothing published while the subscriber was offline ever reached it.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(topicSeen.filter((n) => n >= offlineFrom)).toEqual([]);
      expect(topicSeen.length).toBe(offlineFrom);
      subscription.unsubscribe();
    } finally {
      broker.close();
      await store.close();
    }
  }, 120_000);
});
