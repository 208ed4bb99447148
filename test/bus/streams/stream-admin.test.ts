/**
 * Issue 28 §2: what JetStream users reach for on both stores: purge (all, before a sequence, by
 * age, all but the newest n), a consumer moved to a sequence, a time, the first message or past
 * the last (its pending deliveries dropped), and many deliveries acked in one call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import { StreamCapExceeded, StreamInvalidArgument, StreamAckUnknown, type SqlStreamStore } from '../../../src/bus/index.js';
import { STREAM_BACKENDS } from './stores.js';

async function publishMany(store: SqlStreamStore, clock: SimulatedClock, count: number, stepMs = 1_000): Promise<void> {
  for (let n = 1; n <= count; n++) {
    await store.publish('s', { n });
    clock.advance(stepMs);
  }
}

const seqsOf = async (store: SqlStreamStore, consumer: string, batch = 1_000) => (await store.fetch('s', consumer, { batch })).map((d) => d.seq);

for (const backend of STREAM_BACKENDS) {
  describe(`stream tools on ${backend.name}`, () => {
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());

    it('purges before a sequence, by age, all but the newest n, then all; totals follow; options are checked', async () => {
      const clock = new SimulatedClock(0);
      const store = await backend.open(clock);
      await store.createStream('s');
      await publishMany(store, clock, 50);
      expect(await store.purge('s', { beforeSeq: 11 })).toBe(10);
      expect((await store.getMessage('s', 10))).toBeUndefined();
      expect((await store.getMessage('s', 11))?.seq).toBe(11);
      // Published at 0 s .. 49 s; now is 50 s: older than 30 s is seqs 1..20, of which 11..20 remain.
      expect(await store.purge('s', { olderThanMs: 30_000 })).toBe(10);
      expect(await store.purge('s', { keep: 5 })).toBe(25);
      expect((await store.streamInfo('s')).messages).toBe(5);
      await expect(store.purge('s', { keep: 1, beforeSeq: 3 })).rejects.toBeInstanceOf(StreamInvalidArgument);
      await expect(store.purge('s', { kep: 1 } as never)).rejects.toThrow(/purge\.kep/);
      await expect(store.purge('s', { beforeSeq: 0 })).rejects.toThrow(/purge\.beforeSeq/);
      expect(await store.purge('s')).toBe(5);
      const info = await store.streamInfo('s');
      expect(info).toMatchObject({ messages: 0, bytes: 0, lastSeq: 50 });
      // Sequences go on from where they were.
      expect((await store.publish('s', { n: 51 })).seq).toBe(51);
      await store.close();
    });

    it('moves a consumer to a sequence, a time, the first message and past the last, dropping what it held', async () => {
      const clock = new SimulatedClock(0);
      const store = await backend.open(clock);
      await store.createStream('s');
      await store.createConsumer('s', 'c', { ackWaitMs: 60_000 });
      const start = clock.wallNow();
      await publishMany(store, clock, 20);
      expect(await seqsOf(store, 'c', 5)).toEqual([1, 2, 3, 4, 5]);
      expect((await store.consumerInfo('s', 'c')).pending).toBe(5);
      expect(await store.seekConsumer('s', 'c', { seq: 15 })).toBe(15);
      expect((await store.consumerInfo('s', 'c')).pending).toBe(0);
      expect(await seqsOf(store, 'c')).toEqual([15, 16, 17, 18, 19, 20]);
      expect(await store.seekConsumer('s', 'c', { time: new Date(start + 7_500) })).toBe(9);
      expect((await seqsOf(store, 'c', 2))).toEqual([9, 10]);
      await store.purge('s', { beforeSeq: 4 });
      expect(await store.seekConsumer('s', 'c', 'first')).toBe(4);
      expect(await store.seekConsumer('s', 'c', 'new')).toBe(21);
      expect(await seqsOf(store, 'c')).toEqual([]);
      await store.publish('s', { n: 21 });
      expect(await seqsOf(store, 'c')).toEqual([21]);
      await expect(store.seekConsumer('s', 'c', { seq: 99 })).rejects.toThrow(/seek\.seq/);
      await expect(store.seekConsumer('s', 'c', 'last' as never)).rejects.toBeInstanceOf(StreamInvalidArgument);
      await store.close();
    });

    it('acks many deliveries in one call; a seq not held is refused alone; the cap is named', async () => {
      const clock = new SimulatedClock(0);
      const store = await backend.open(clock);
      await store.createStream('s');
      await store.createConsumer('s', 'c', { ackWaitMs: 60_000 });
      await publishMany(store, clock, 300, 1);
      const seqs = await seqsOf(store, 'c', 300);
      expect(seqs).toHaveLength(300);
      const result = await store.ackMany('s', 'c', [...seqs, 999]);
      expect(result.acked).toBe(300);
      expect(result.refused.map((r) => r.seq)).toEqual([999]);
      expect(result.refused[0]!.error).toBeInstanceOf(StreamAckUnknown);
      expect((await store.consumerInfo('s', 'c')).pending).toBe(0);
      // Nothing comes again after the ack wait.
      clock.advance(120_000);
      expect(await seqsOf(store, 'c')).toEqual([]);
      await expect(store.ackMany('s', 'c', Array.from({ length: 1_001 }, (_, i) => i + 1))).rejects.toBeInstanceOf(StreamCapExceeded);
      await store.close();
    });
  });
}
