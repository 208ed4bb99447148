/**
 * One suite, two stores (SQLite, Postgres): every StreamStore must pass it unchanged, under a
 * SimulatedClock so that deadlines, retention by age and the de-duplication window are decided by
 * the clock, not by the database server's time.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import {
  STREAM_LIMITS,
  StreamAckUnknown,
  StreamCapExceeded,
  StreamConflict,
  StreamConsumerNotFound,
  StreamInvalidArgument,
  StreamNotFound,
  StreamStoreClosed,
  type SqlStreamStore,
  type StreamEvent,
} from '../../../src/bus/index.js';
import { publishMany, STREAM_BACKENDS } from './stores.js';

const text = (payload: Buffer): string => payload.toString();

describe.each(STREAM_BACKENDS)('StreamStore on $name', (backend) => {
  let clock: SimulatedClock;
  let store: SqlStreamStore;
  let events: StreamEvent[];

  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown(), 30_000);

  beforeEach(async () => {
    clock = new SimulatedClock();
    events = [];
    store = await backend.open(clock, { onEvent: (event) => events.push(event) });
  });

  afterEach(async () => {
    await store.close();
  });

  it('creates streams idempotently and refuses other settings', async () => {
    const info = await store.createStream('orders', { maxAgeMs: 60_000 });
    expect(info).toMatchObject({ name: 'orders', lastSeq: 0, messages: 0, bytes: 0, consumers: 0 });
    expect(info.config).toEqual({ maxAgeMs: 60_000, maxBytes: 1_073_741_824, maxMsgs: 100_000_000, retention: 'limits', dedupWindowMs: 120_000 });
    expect((await store.createStream('orders', { maxAgeMs: 60_000 })).name).toBe('orders');
    const conflict = await store.createStream('orders', { maxAgeMs: 1 }).catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(StreamConflict);
    expect((conflict as StreamConflict).setting).toBe('maxAgeMs');
    expect(await store.streams()).toEqual(['orders']);
    await expect(store.streamInfo('nope')).rejects.toBeInstanceOf(StreamNotFound);
    await expect(store.createStream('bad name')).rejects.toBeInstanceOf(StreamInvalidArgument);
    await expect(store.createStream('x', { dedupWindowMs: STREAM_LIMITS.maxDedupWindowMs + 1 })).rejects.toBeInstanceOf(StreamCapExceeded);
  });

  it('publishes with gapless sequences, time, headers, bytes and msgpack values', async () => {
    await store.createStream('s');
    const first = await store.publish('s', Buffer.from('hello'), { headers: { kind: 'greeting' } });
    expect(first).toEqual({ stream: 's', seq: 1, duplicate: false });
    clock.advance(5);
    const second = await store.publish('s', { order: 42, items: ['a', 'b'] });
    expect(second.seq).toBe(2);
    const seqs = await publishMany(store, 's', 300);
    expect(seqs).toEqual(Array.from({ length: 300 }, (_, i) => i + 3));
    const m1 = (await store.getMessage('s', 1))!;
    expect(text(m1.payload)).toBe('hello');
    expect(m1.headers).toEqual({ kind: 'greeting' });
    expect(m1.encoding).toBe('bytes');
    expect(m1.time).toBe(clock.wallNow() - 5);
    const m2 = (await store.getMessage('s', 2))!;
    expect(m2.value()).toEqual({ order: 42, items: ['a', 'b'] });
    expect(m2.headers).toBeUndefined();
    expect(await store.getMessage('s', 999)).toBeUndefined();
    expect(await store.streamInfo('s')).toMatchObject({ lastSeq: 302, messages: 302 });
    await expect(store.publish('nope', Buffer.from('x'))).rejects.toBeInstanceOf(StreamNotFound);
  });

  it('stores payloads up to the cap (in pieces past 64 KiB) and refuses larger ones', async () => {
    await store.createStream('big');
    const payload = Buffer.alloc(STREAM_LIMITS.maxPayloadBytes, 7);
    payload[12345] = 1;
    const { seq } = await store.publish('big', payload);
    expect((await store.getMessage('big', seq))!.payload.equals(payload)).toBe(true);
    const over = await store.publish('big', Buffer.alloc(STREAM_LIMITS.maxPayloadBytes + 1)).catch((error: unknown) => error);
    expect(over).toBeInstanceOf(StreamCapExceeded);
    expect((over as StreamCapExceeded).cap).toBe('streams.maxPayloadBytes');
    await store.createConsumer('big', 'c');
    const [delivery] = await store.fetch('big', 'c');
    expect(delivery!.payload.equals(payload)).toBe(true);
    await expect(store.publish('big', undefined)).rejects.toBeInstanceOf(StreamInvalidArgument);
    await expect(store.publish('big', Buffer.from('x'), { headers: { a: 1 as unknown as string } })).rejects.toBeInstanceOf(StreamInvalidArgument);
  });

  it('de-duplicates by message id within the window, returning the first sequence', async () => {
    await store.createStream('d', { dedupWindowMs: 1_000 });
    const a = await store.publish('d', Buffer.from('a'), { msgId: 'id-1' });
    const again = await store.publish('d', Buffer.from('a2'), { msgId: 'id-1' });
    expect(again).toEqual({ stream: 'd', seq: a.seq, duplicate: true });
    // Within one group commit too.
    const [x, y, z] = await Promise.all([
      store.publish('d', Buffer.from('x'), { msgId: 'id-2' }),
      store.publish('d', Buffer.from('y'), { msgId: 'id-2' }),
      store.publish('d', Buffer.from('z')),
    ]);
    expect(y).toEqual({ ...x, duplicate: true });
    expect(z!.seq).toBe(x!.seq + 1);
    clock.advance(1_000);
    const later = await store.publish('d', Buffer.from('a3'), { msgId: 'id-1' });
    expect(later).toEqual({ stream: 'd', seq: z!.seq + 1, duplicate: false });
    expect((await store.streamInfo('d')).messages).toBe(4);
  });

  it('delivers in order, acks, and redelivers after the ack deadline with a growing delivery count', async () => {
    await store.createStream('s');
    await publishMany(store, 's', 5);
    const info = await store.createConsumer('s', 'c', { ackWaitMs: 1_000 });
    expect(info).toMatchObject({ ackFloor: 0, nextSeq: 1, pending: 0, lag: 5 });
    const first = await store.fetch('s', 'c', { batch: 3 });
    expect(first.map((d) => [d.seq, d.deliveryCount, text(d.payload)])).toEqual([
      [1, 1, 'm0'],
      [2, 1, 'm1'],
      [3, 1, 'm2'],
    ]);
    await first[1]!.ack();
    expect(await store.consumerInfo('s', 'c')).toMatchObject({ ackFloor: 0, nextSeq: 4, pending: 2, lag: 2 });
    // Not yet due: only new ones.
    expect((await store.fetch('s', 'c', { batch: 10 })).map((d) => d.seq)).toEqual([4, 5]);
    expect(await store.fetch('s', 'c', { batch: 10 })).toEqual([]);
    clock.advance(1_000);
    const again = await store.fetch('s', 'c', { batch: 10 });
    expect(again.map((d) => [d.seq, d.deliveryCount])).toEqual([
      [1, 2],
      [3, 2],
      [4, 2],
      [5, 2],
    ]);
    for (const d of again) await d.ack();
    expect(await store.consumerInfo('s', 'c')).toMatchObject({ ackFloor: 5, nextSeq: 6, pending: 0, lag: 0 });
    await expect(store.ack('s', 'c', 1)).rejects.toBeInstanceOf(StreamAckUnknown);
    await expect(store.ack('s', 'c', 99)).rejects.toBeInstanceOf(StreamAckUnknown);
    await expect(store.nak('s', 'c', 1)).rejects.toBeInstanceOf(StreamAckUnknown);
    await expect(store.term('s', 'c', 1)).rejects.toBeInstanceOf(StreamAckUnknown);
    await expect(store.inProgress('s', 'c', 1)).rejects.toBeInstanceOf(StreamAckUnknown);
  });

  it('naks with a delay, terms, and extends deadlines with inProgress', async () => {
    await store.createStream('s');
    await publishMany(store, 's', 3);
    await store.createConsumer('s', 'c', { ackWaitMs: 1_000 });
    const [a, b, c] = await store.fetch('s', 'c', { batch: 3 });
    await a!.nak();
    await b!.nak(5_000);
    await c!.term();
    expect(events).toEqual([{ kind: 'terminated', stream: 's', consumer: 'c', seq: 3, reason: 'term', deliveries: 1 }]);
    const now = await store.fetch('s', 'c', { batch: 10 });
    expect(now.map((d) => [d.seq, d.deliveryCount])).toEqual([[1, 2]]);
    await now[0]!.inProgress();
    clock.advance(999);
    await now[0]!.inProgress();
    clock.advance(999);
    expect(await store.fetch('s', 'c', { batch: 10 })).toEqual([]);
    clock.advance(3_100);
    expect((await store.fetch('s', 'c', { batch: 10 })).map((d) => [d.seq, d.deliveryCount])).toEqual([
      [1, 3],
      [2, 2],
    ]);
  });

  it('terminates after maxDeliver and says so', async () => {
    await store.createStream('s');
    await publishMany(store, 's', 1);
    await store.createConsumer('s', 'c', { ackWaitMs: 100, maxDeliver: 3 });
    for (let n = 1; n <= 3; n++) {
      const [d] = await store.fetch('s', 'c');
      expect(d!.deliveryCount).toBe(n);
      clock.advance(100);
    }
    expect(await store.fetch('s', 'c')).toEqual([]);
    expect(events).toEqual([{ kind: 'terminated', stream: 's', consumer: 'c', seq: 1, reason: 'maxDeliver', deliveries: 3 }]);
    expect(store.counts.get('s')).toMatchObject({ terminatedMaxDeliver: 1, delivered: 1, redelivered: 2 });
    expect(await store.consumerInfo('s', 'c')).toMatchObject({ pending: 0, ackFloor: 1 });
  });

  it('starts consumers at the first message, a sequence, a time, or new messages only', async () => {
    await store.createStream('s');
    await publishMany(store, 's', 3);
    clock.advance(1_000);
    const t = clock.wallNow();
    await publishMany(store, 's', 3, 3);
    await store.createConsumer('s', 'all');
    await store.createConsumer('s', 'seq', { deliverPolicy: { startSeq: 5 } });
    await store.createConsumer('s', 'time', { deliverPolicy: { startTime: t } });
    await store.createConsumer('s', 'new', { deliverPolicy: 'new' });
    const seqs = async (consumer: string) => (await store.fetch('s', consumer, { batch: 10 })).map((d) => d.seq);
    expect(await seqs('all')).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await seqs('seq')).toEqual([5, 6]);
    expect(await seqs('time')).toEqual([4, 5, 6]);
    expect(await seqs('new')).toEqual([]);
    await store.publish('s', Buffer.from('later'));
    expect(await seqs('new')).toEqual([7]);
    expect(await store.consumers('s')).toEqual(['all', 'new', 'seq', 'time']);
  });

  it('refuses a second consumer with the same name and other settings, and unknown consumers', async () => {
    await store.createStream('s');
    await store.createConsumer('s', 'c', { ackWaitMs: 5_000 });
    await store.createConsumer('s', 'c', { ackWaitMs: 5_000 });
    const conflict = await store.createConsumer('s', 'c', { ackWaitMs: 6_000 }).catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(StreamConflict);
    expect((conflict as StreamConflict).setting).toBe('ackWaitMs');
    await expect(store.fetch('s', 'nope')).rejects.toBeInstanceOf(StreamConsumerNotFound);
    await expect(store.fetch('nope', 'c')).rejects.toBeInstanceOf(StreamNotFound);
    await expect(store.createConsumer('s', 'd', { ackWaitMs: STREAM_LIMITS.maxAckWaitMs + 1 })).rejects.toMatchObject({ cap: 'streams.maxAckWaitMs' });
    await expect(store.createConsumer('s', 'd', { maxAckPending: STREAM_LIMITS.maxAckPending + 1 })).rejects.toMatchObject({ cap: 'streams.maxAckPending' });
    await expect(store.fetch('s', 'c', { batch: STREAM_LIMITS.maxFetchBatch + 1 })).rejects.toMatchObject({ cap: 'streams.maxFetchBatch' });
    expect(await store.deleteConsumer('s', 'c')).toBe(true);
    expect(await store.deleteConsumer('s', 'c')).toBe(false);
    await expect(store.consumerInfo('s', 'c')).rejects.toBeInstanceOf(StreamConsumerNotFound);
  });

  it('holds at most maxAckPending deliveries per consumer', async () => {
    await store.createStream('s');
    await publishMany(store, 's', 10);
    await store.createConsumer('s', 'c', { maxAckPending: 4 });
    const first = await store.fetch('s', 'c', { batch: 10 });
    expect(first.map((d) => d.seq)).toEqual([1, 2, 3, 4]);
    expect(await store.fetch('s', 'c', { batch: 10 })).toEqual([]);
    await first[0]!.ack();
    await first[1]!.ack();
    expect((await store.fetch('s', 'c', { batch: 10 })).map((d) => d.seq)).toEqual([5, 6]);
  });

  it('shares one consumer between workers: no message handed to two at once', async () => {
    await store.createStream('s');
    await publishMany(store, 's', 200);
    await store.createConsumer('s', 'work', { maxAckPending: 1_000 });
    const batches = await Promise.all(Array.from({ length: 8 }, () => store.fetch('s', 'work', { batch: 30 })));
    const seqs = batches.flat().map((d) => d.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.length).toBe(200);
  });

  it('waits in fetch until a publish wakes it, or until maxWaitMs', async () => {
    const real = await backend.open();
    try {
      await real.createStream('w');
      await real.createConsumer('w', 'c');
      const waiting = real.fetch('w', 'c', { batch: 5, maxWaitMs: 5_000 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(real.waitingFetches).toBe(1);
      await real.publish('w', Buffer.from('wake'));
      expect((await waiting).map((d) => text(d.payload))).toEqual(['wake']);
      const started = Date.now();
      expect(await real.fetch('w', 'c', { maxWaitMs: 50 })).toEqual([]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(45);
      const controller = new AbortController();
      const aborted = real.fetch('w', 'c', { maxWaitMs: 60_000, signal: controller.signal });
      controller.abort();
      expect(await aborted).toEqual([]);
    } finally {
      await real.close();
    }
  });

  it('retains by age, count and bytes, oldest first, in bounded batches', async () => {
    await store.createStream('age', { maxAgeMs: 1_000 });
    await publishMany(store, 'age', 5);
    clock.advance(600);
    await publishMany(store, 'age', 5);
    clock.advance(500);
    expect(await store.enforceRetention('age')).toBe(5);
    expect(await store.streamInfo('age')).toMatchObject({ messages: 5, lastSeq: 10 });
    expect(await store.getMessage('age', 5)).toBeUndefined();
    expect(await store.getMessage('age', 6)).toBeDefined();

    await store.createStream('count', { maxMsgs: 3 });
    await publishMany(store, 'count', 10);
    expect(await store.enforceRetention('count')).toBe(7);
    expect(await store.streamInfo('count')).toMatchObject({ messages: 3, lastSeq: 10 });

    await store.createStream('bytes', { maxBytes: 100 });
    for (let i = 0; i < 10; i++) await store.publish('bytes', Buffer.alloc(30));
    expect(await store.enforceRetention('bytes')).toBe(7);
    expect(await store.streamInfo('bytes')).toMatchObject({ messages: 3, bytes: 90 });

    const small = await backend.open(clock, { retentionBatch: 4 });
    try {
      await small.createStream('many', { maxMsgs: 1 });
      await publishMany(small, 'many', 11);
      expect(await small.enforceRetention('many')).toBe(4);
      expect(await small.enforceRetention('many')).toBe(4);
      expect(await small.enforceRetention('many')).toBe(2);
      expect(await small.enforceRetention('many')).toBe(0);
    } finally {
      await small.close();
    }
    expect(events.filter((e) => e.kind === 'evicted').map((e) => e.kind === 'evicted' && e.reason)).toEqual(['age', 'count', 'bytes']);
  });

  it('a consumer behind evicted messages skips them; a redelivery of an evicted message is dropped', async () => {
    await store.createStream('s', { maxMsgs: 2 });
    await publishMany(store, 's', 3);
    await store.createConsumer('s', 'c', { ackWaitMs: 100 });
    const [d1] = await store.fetch('s', 'c');
    expect(d1!.seq).toBe(1);
    await store.enforceRetention('s');
    expect((await store.consumerInfo('s', 'c')).lag).toBe(2);
    clock.advance(100);
    expect((await store.fetch('s', 'c', { batch: 10 })).map((d) => d.seq)).toEqual([2, 3]);
    expect((await store.consumerInfo('s', 'c')).pending).toBe(2);
  });

  it('work-queue retention deletes a message once every consumer has acked it', async () => {
    await store.createStream('q', { retention: 'workqueue' });
    await publishMany(store, 'q', 4);
    expect(await store.enforceRetention('q')).toBe(0);
    await store.createConsumer('q', 'a');
    await store.createConsumer('q', 'b');
    const fromA = await store.fetch('q', 'a', { batch: 4 });
    for (const d of fromA) await d.ack();
    expect(await store.enforceRetention('q')).toBe(0);
    const fromB = await store.fetch('q', 'b', { batch: 4 });
    await fromB[0]!.ack();
    await fromB[1]!.ack();
    await fromB[3]!.ack();
    expect(await store.enforceRetention('q')).toBe(2);
    expect((await store.streamInfo('q')).messages).toBe(2);
    await fromB[2]!.term();
    expect(await store.enforceRetention('q')).toBe(2);
    expect((await store.streamInfo('q')).messages).toBe(0);
  });

  it('deletes a stream with its messages and consumers', async () => {
    await store.createStream('s');
    await publishMany(store, 's', 5);
    await store.createConsumer('s', 'c');
    await store.fetch('s', 'c', { batch: 2 });
    expect(await store.deleteStream('s')).toBe(true);
    expect(await store.deleteStream('s')).toBe(false);
    await expect(store.fetch('s', 'c')).rejects.toBeInstanceOf(StreamNotFound);
    await store.createStream('s');
    expect((await store.publish('s', Buffer.from('again'))).seq).toBe(1);
  });

  it('deletes a large stream fully in bounded batches, leaving the other streams alone', async () => {
    const small = await backend.open(clock, { retentionBatch: 64 });
    try {
      await small.createStream('big');
      await small.createStream('other');
      await publishMany(small, 'big', 3_000);
      await Promise.all(Array.from({ length: 300 }, (_, i) => small.publish('big', Buffer.from(`d${i}`), { msgId: `id-${i}` })));
      await small.publish('big', Buffer.alloc(200_000, 7)); // stored in pieces
      await publishMany(small, 'other', 5);
      await small.createConsumer('big', 'c');
      await small.createConsumer('big', 'd');
      await small.fetch('big', 'c', { batch: 1_000 });
      await small.fetch('big', 'd', { batch: 700 });
      await small.createConsumer('other', 'c');
      await small.fetch('other', 'c', { batch: 2 });
      expect(await small.deleteStream('big')).toBe(true);
      const rows = async (table: string): Promise<number> => Number((await backend.db.query(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
      const t = small.tables;
      expect({ msgs: await rows(t.msgs), chunks: await rows(t.chunks), dedup: await rows(t.dedup), consumers: await rows(t.consumers), pending: await rows(t.pending) }).toEqual({
        msgs: 5,
        chunks: 0,
        dedup: 0,
        consumers: 1,
        pending: 2,
      });
      expect(await small.streams()).toEqual(['other']);
      expect((await small.consumerInfo('other', 'c')).pending).toBe(2);
      await small.createStream('big');
      expect((await small.streamInfo('big')).messages).toBe(0);
      expect((await small.publish('big', Buffer.from('again'))).seq).toBe(1);
    } finally {
      await small.close();
    }
  });

  it('writes the acks waiting for their group commit in the next fetch transaction, ahead of its reads', async () => {
    await store.createStream('s');
    await publishMany(store, 's', 6);
    await store.createConsumer('s', 'c', { maxAckPending: 3 });
    const first = await store.fetch('s', 'c', { batch: 3 });
    // Not awaited: the acks wait for their group commit, and the fetch issued now takes them in.
    const acks = first.map((delivery) => delivery.ack());
    const second = await store.fetch('s', 'c', { batch: 3 });
    expect(second.map((delivery) => delivery.seq)).toEqual([4, 5, 6]);
    await Promise.all(acks);
    await expect(first[0]!.ack()).rejects.toBeInstanceOf(StreamAckUnknown);
    expect(await store.consumerInfo('s', 'c')).toMatchObject({ ackFloor: 3, pending: 3, lag: 0 });
  });

  it('caps the ack queue with a cap of its own, streams.maxAckQueue', async () => {
    await store.createStream('s');
    await store.createConsumer('s', 'c');
    // Every ack issued in one turn waits for the same group commit: one past the cap is refused by name.
    const acks = Array.from({ length: STREAM_LIMITS.maxAckQueue + 1 }, (_, i) => store.ack('s', 'c', i + 1).then(
      () => undefined,
      (error: unknown) => error,
    ));
    const errors = await Promise.all(acks);
    const capped = errors.filter((error) => error instanceof StreamCapExceeded) as StreamCapExceeded[];
    expect(capped).toHaveLength(1);
    expect(capped[0]).toMatchObject({ cap: 'streams.maxAckQueue', limit: STREAM_LIMITS.maxAckQueue });
    expect(errors.filter((error) => error instanceof StreamAckUnknown)).toHaveLength(STREAM_LIMITS.maxAckQueue);
  });

  it('refuses every call once closed, after the publishes in flight committed', async () => {
    await store.createStream('s');
    const inFlight = store.publish('s', Buffer.from('last'));
    await store.close();
    expect((await inFlight).seq).toBe(1);
    await expect(store.publish('s', Buffer.from('x'))).rejects.toBeInstanceOf(StreamStoreClosed);
    await expect(store.fetch('s', 'c')).rejects.toBeInstanceOf(StreamStoreClosed);
    expect(store.health()).toEqual({ healthy: false, reason: 'closed' });
  });
});
