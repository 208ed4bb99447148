/**
 * StreamConsumer and StreamRetention as supervised actors on real stores: ack on success, nak with
 * backoff on failure, the handler's AbortSignal, crashes through the supervisor, the admin tree's
 * `streams` section with lag and pending, and retention draining a backlog in bounded passes.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SimulatedClock, type Ref } from '../../../src/actors/index.js';
import { Admin } from '../../../src/admin/index.js';
import { GenServer, Supervisor } from '../../../src/behaviours/index.js';
import { StreamConsumer, StreamRetention, type Delivery, type SqlStreamStore } from '../../../src/bus/index.js';
import { startTestNode } from '../../admin/helpers.js';
import { eventually, sleep, testSystem } from '../../support/systems.js';
import { publishMany, STREAM_BACKENDS } from './stores.js';
import { eventuallyAsync } from '../../data/kv/stores.js';

/** A handler that runs until its signal aborts, recording `<seq>:<reason>` in `aborted`. */
function untilAborted(aborted: string[]): (d: Delivery, signal: AbortSignal) => Promise<void> {
  return (d, signal) =>
    new Promise<void>((resolve) => {
      signal.addEventListener('abort', () => {
        aborted.push(`${d.seq}:${String((signal.reason as Error).message ?? signal.reason)}`);
        resolve();
      });
    });
}

describe.each(STREAM_BACKENDS)('StreamConsumer on $name', (backend) => {
  let store: SqlStreamStore;

  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown(), 30_000);
  beforeEach(async () => {
    store = await backend.open(undefined, { pollIntervalMs: 50 });
    await store.createStream('s');
  });
  afterEach(() => store.close());

  it('hands every message to the handler once and acks it, under a supervisor', async () => {
    const system = testSystem();
    const seen: number[] = [];
    const root = await Supervisor.start(system, {
      strategy: 'one_for_one',
      children: [StreamConsumer.child('orders', { store, stream: 's', consumer: 'c', batch: 16, concurrency: 4, handler: (d) => void seen.push(d.seq) })],
    });
    await publishMany(store, 's', 100);
    await eventually(() => seen.length === 100, 10_000, '100 handled');
    await eventuallyAsync(async () => (await store.consumerInfo('s', 'c')).pending === 0, 5_000, 'all acked');
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(await store.consumerInfo('s', 'c')).toMatchObject({ ackFloor: 100, lag: 0, pending: 0 });
    const ref = (await Supervisor.whichChildren(system, root))[0]!.ref as Ref;
    expect(await StreamConsumer.status(system, ref)).toMatchObject({ stream: 's', consumer: 'c', acked: 100, failed: 0 });
    await Supervisor.stop(system, root);
  });

  it('StreamConsumer.start runs it under a named supervisor of its own: killed, it is restarted and consumes on', async () => {
    const system = testSystem();
    const seen = new Set<number>();
    const ref = await StreamConsumer.start(system, { store, stream: 's', consumer: 'c', handler: (d) => void seen.add(d.seq) });
    expect(system.whereis('molo.stream_consumer.s.c.supervisor')).toBe(ref);
    const [child] = await Supervisor.whichChildren(system, ref);
    expect(child).toMatchObject({ id: 'consumer', type: 'worker' });
    await publishMany(store, 's', 5);
    await eventually(() => seen.size === 5, 10_000, 'first five handled');

    system.exit(child!.ref as Ref, 'kill');
    await eventuallyAsync(async () => {
      const [again] = await Supervisor.whichChildren(system, ref);
      return typeof again?.ref === 'object' && again.ref !== child!.ref && system.isAlive(again.ref);
    }, 5_000, 'the consumer restarted');
    await publishMany(store, 's', 5);
    await eventually(() => seen.size === 10, 10_000, 'the next five handled by the new actor');
    // The supervisor's ref answers for the consumer running now.
    await eventuallyAsync(async () => (await StreamConsumer.status(system, ref)).acked === 5, 5_000, 'the new actor acked five');
    // A second consumer of the same name in this system gets the next free name.
    const second = await StreamConsumer.start(system, { store, stream: 's', consumer: 'c', handler: () => undefined });
    expect(system.whereis('molo.stream_consumer.s.c.supervisor.2')).toBe(second);
    await GenServer.stop(system, second, 'shutdown');
    await GenServer.stop(system, ref, 'shutdown');
    expect(system.isAlive(child!.ref as Ref)).toBe(false);
  });

  it('StreamConsumer.start rejects with the consumer\'s own init error', async () => {
    const system = testSystem();
    const outcome = await StreamConsumer.start(system, { store, stream: 'missing-stream', consumer: 'c', handler: () => undefined }).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(/missing-stream/);
    expect(system.whereis('molo.stream_consumer.missing-stream.c.supervisor')).toBeUndefined();
  });

  it('naks a failed message with backoff and gets it again with a higher delivery count', async () => {
    const system = testSystem();
    const calls: [number, number][] = [];
    const ref = await StreamConsumer.start(system, {
      store,
      stream: 's',
      consumer: 'c',
      backoff: { initialMs: 200 },
      handler: (d: Delivery) => {
        calls.push([d.seq, d.deliveryCount]);
        if (d.deliveryCount === 1) throw new Error('first time fails');
      },
    });
    const started = Date.now();
    await store.publish('s', Buffer.from('x'));
    await eventually(() => calls.length === 2, 10_000, 'redelivery');
    expect(Date.now() - started).toBeGreaterThanOrEqual(180);
    expect(calls).toEqual([
      [1, 1],
      [1, 2],
    ]);
    await eventuallyAsync(async () => (await store.consumerInfo('s', 'c')).pending === 0, 5_000, 'acked');
    expect(await StreamConsumer.status(system, ref)).toMatchObject({ acked: 1, failed: 1, lastError: 'first time fails' });
    expect(store.counts.get('s')).toMatchObject({ naked: 1, redelivered: 1, acked: 1 });
    await GenServer.stop(system, ref, 'shutdown');
  });

  it('aborts a handler past its timeout (naked), and on stop (left pending for redelivery)', async () => {
    const system = testSystem();
    const aborted: string[] = [];
    const ref = await StreamConsumer.start(system, {
      store,
      stream: 's',
      consumer: 'c',
      handlerTimeoutMs: 100,
      backoff: { initialMs: 60_000 },
      handler: untilAborted(aborted),
    });
    await store.publish('s', Buffer.from('slow'));
    await eventually(() => aborted.length === 1, 5_000, 'timeout abort');
    expect(aborted[0]).toMatch(/^1:handler ran past 100 ms/);
    await eventuallyAsync(async () => (await StreamConsumer.status(system, ref)).failed === 1, 5_000, 'naked');
    await store.publish('s', Buffer.from('stopped'));
    await eventually(() => aborted.length === 2 || false, 200, 'nothing').catch(() => undefined);
    await GenServer.stop(system, ref, 'shutdown');
    await eventually(() => aborted.length === 2, 5_000, 'stop abort');
    const info = await store.consumerInfo('s', 'c');
    expect(info.pending).toBe(2);
  });

  it('on a simulated clock, the handler timeout fires when the clock passes it, not in real time', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const aborted: string[] = [];
    const ref = await StreamConsumer.start(system, {
      store,
      stream: 's',
      consumer: 'c',
      handlerTimeoutMs: 1_000,
      backoff: { initialMs: 60_000 },
      handler: untilAborted(aborted),
    });
    await store.publish('s', Buffer.from('slow'));
    await eventuallyAsync(async () => (await StreamConsumer.status(system, ref)).inFlight === 1, 5_000, 'handler running');
    await sleep(1_300);
    expect(aborted).toEqual([]);
    await clock.advanceAsync(1_000);
    await eventually(() => aborted.length === 1, 2_000, 'timeout abort');
    expect(aborted[0]).toMatch(/^1:handler ran past 1000 ms/);
    await GenServer.stop(system, ref, 'shutdown');
  });

  it('crashes after repeated store failures; the supervisor restarts it', async () => {
    const system = testSystem();
    const root = await Supervisor.start(system, {
      strategy: 'one_for_one',
      intensity: 5,
      periodMs: 60_000,
      children: [StreamConsumer.child('c', { store, stream: 's', consumer: 'c', pollWaitMs: 20, maxStoreFailures: 1, handler: () => undefined })],
    });
    const first = (await Supervisor.whichChildren(system, root))[0]!.ref;
    // The consumer vanishes under it: its next fetch fails, the actor crashes, and the restart creates it again.
    await store.deleteConsumer('s', 'c');
    await eventuallyAsync(async () => (await Supervisor.whichChildren(system, root))[0]!.ref !== first, 5_000, 'restart');
    expect((await Supervisor.status(system, root)).restartsInWindow).toBeGreaterThanOrEqual(1);
    await store.publish('s', Buffer.from('after'));
    await eventuallyAsync(async () => (await store.consumerInfo('s', 'c')).ackFloor === 1, 5_000, 'handled after restart');
    await Supervisor.stop(system, root);
  });
});

describe('stream actors on SQLite', () => {
  const backend = STREAM_BACKENDS.find((b) => b.name === 'sqlite')!;
  let store: SqlStreamStore;
  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown(), 30_000);
  beforeEach(async () => {
    store = await backend.open(undefined, { pollIntervalMs: 50, retentionBatch: 10 });
  });
  afterEach(() => store.close());

  it('shows consumers in the admin tree with lag and pending', async () => {
    await store.createStream('s');
    await publishMany(store, 's', 5);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { node } = await startTestNode({
      root: {
        children: [
          StreamConsumer.child('orders', { store, stream: 's', consumer: 'c', batch: 2, handler: () => gate }),
          StreamRetention.child('retention', { store }),
        ],
      },
      admin: false,
    });
    await eventuallyAsync(async () => {
      const tree = await Admin.tree(node.system);
      const entry = tree.sections.streams?.[0]?.value as { pending?: number } | undefined;
      return entry?.pending === 2;
    }, 5_000, 'pending 2 in the tree');
    const tree = await Admin.tree(node.system);
    expect(tree.sections.streams).toHaveLength(1);
    expect(tree.sections.streams![0]!.value).toMatchObject({ stream: 's', consumer: 'c', lag: 3, pending: 2, inFlight: 1 });
    expect(tree.root?.children?.map((child) => child.id)).toEqual(['orders', 'retention']);
    release();
    await node.stop();
  });

  it('retention actor drains a backlog in bounded passes', async () => {
    const system = testSystem();
    await store.createStream('r', { maxMsgs: 5 });
    await publishMany(store, 'r', 55);
    const ref = await StreamRetention.start(system, { store, intervalMs: 10_000 });
    await eventuallyAsync(async () => (await store.streamInfo('r')).messages === 5, 5_000, 'drained');
    const status = await StreamRetention.status(system, ref);
    // 50 to evict, at most 10 per pass: at least five passes.
    expect(status.passes).toBeGreaterThanOrEqual(5);
    expect(status.evicted).toBe(50);
    await GenServer.stop(system, ref, 'shutdown');
    await sleep(1);
  });
});
