/**
 * Settling is fenced by the delivery attempt, as task leases are fenced by their token: once a
 * delivery expired and went to another worker, the first worker's ack, nak, term and inProgress are
 * refused with StreamSettleStale and counted, and leave the second worker's delivery alone (its ack
 * then succeeds). On both stores, under a SimulatedClock.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { SimulatedClock } from '../../../src/actors/index.js';
import { StreamAckUnknown, StreamSettleStale, type SqlStreamStore } from '../../../src/bus/index.js';
import { STREAM_BACKENDS } from './stores.js';

const ACK_WAIT_MS = 1_000;

describe.each(STREAM_BACKENDS)('settling fenced by attempt on $name', (backend) => {
  let clock: SimulatedClock;
  let store: SqlStreamStore;
  let registry: Registry;

  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown(), 30_000);

  beforeEach(async () => {
    clock = new SimulatedClock();
    registry = new Registry();
    store = await backend.open(clock, { metrics: registry });
    await store.createStream('s');
    await store.createConsumer('s', 'c', { ackWaitMs: ACK_WAIT_MS });
  });

  afterEach(async () => {
    await store.close();
  });

  /** The first worker's delivery of seq 1, expired and redelivered to a second worker. */
  async function redelivered() {
    await store.publish('s', Buffer.from('job'));
    const [first] = await store.fetch('s', 'c');
    clock.advance(ACK_WAIT_MS + 1);
    const [second] = await store.fetch('s', 'c');
    expect([first!.deliveryCount, second!.deliveryCount]).toEqual([1, 2]);
    return { first: first!, second: second! };
  }

  const outcome = (settle: Promise<void>): Promise<string> =>
    settle.then(
      () => 'accepted',
      (error: unknown) => (error as { code?: string }).code ?? String(error),
    );

  it("refuses the first worker's term after redelivery; the second worker's ack succeeds", async () => {
    const { first, second } = await redelivered();
    expect(await outcome(first.term())).toBe(StreamSettleStale.code);
    expect(await outcome(second.ack())).toBe('accepted');
    expect((await store.consumerInfo('s', 'c')).pending).toBe(0);
  });

  it('refuses stale ack, nak and inProgress too, leaves the live delivery untouched, and counts each', async () => {
    const { first, second } = await redelivered();
    const stale = await Promise.all([first.ack(), first.nak(), first.inProgress()].map(outcome));
    expect(stale).toEqual([StreamSettleStale.code, StreamSettleStale.code, StreamSettleStale.code]);
    const error = (await first.term().catch((caught: unknown) => caught)) as StreamSettleStale;
    expect(error).toBeInstanceOf(StreamSettleStale);
    expect(error).toMatchObject({ stream: 's', consumer: 'c', seq: 1, attempt: 1, current: 2 });
    // The stale nak did not pull the live delivery's deadline in: nothing is due before it expires.
    clock.advance(ACK_WAIT_MS - 10);
    expect(await store.fetch('s', 'c')).toEqual([]);
    expect(await outcome(second.ack())).toBe('accepted');
    expect(store.counts.get('s')?.staleSettles).toBe(4);
    expect(await registry.getSingleMetricAsString('molo_stream_stale_settles_total')).toContain('stream="s"} 4');
  });

  it('fences acks that ride in a fetch transaction, and still answers a settled delivery with StreamAckUnknown', async () => {
    const { first, second } = await redelivered();
    await store.publish('s', Buffer.from('next'));
    // Not awaited: both acks wait for their group commit, which the next fetch takes in.
    const acks = [first.ack(), second.ack()].map(outcome);
    const next = await store.fetch('s', 'c');
    expect(next.map((delivery) => delivery.seq)).toEqual([2]);
    expect(await Promise.all(acks)).toEqual([StreamSettleStale.code, 'accepted']);
    await expect(first.ack()).rejects.toBeInstanceOf(StreamAckUnknown);
    // By sequence, without a delivery: not fenced (an operator's settle).
    await store.ack('s', 'c', 2);
    expect((await store.consumerInfo('s', 'c')).pending).toBe(0);
  });
});
