/**
 * The streams' telemetry: Prometheus counters and gauges read from the store's counts at scrape
 * time, and spans for publish and deliver through a registered tracer provider.
 */
import { trace } from '@opentelemetry/api';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import { GenServer } from '../../../src/behaviours/index.js';
import { StreamConsumer, StreamSpanName } from '../../../src/bus/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { RecordingTracerProvider } from '../../telemetry/helpers.js';
import { STREAM_BACKENDS } from './stores.js';

/** `eventually` for a check that must await (the registry's text). */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const backend = STREAM_BACKENDS.find((b) => b.name === 'sqlite')!;
const provider = new RecordingTracerProvider();

beforeAll(async () => {
  expect(trace.setGlobalTracerProvider(provider)).toBe(true);
  await backend.setup();
}, 30_000);
afterAll(async () => {
  trace.disable();
  await backend.teardown();
});

describe('stream telemetry', () => {
  it('counts published, delivered, redelivered, acked, naked, terminated and evicted; gauges lag and pending', async () => {
    const registry = new Registry();
    const clock = new SimulatedClock();
    const store = await backend.open(clock, { metrics: registry, name: 'main' });
    try {
      await store.createStream('s', { maxMsgs: 4 });
      for (let i = 0; i < 6; i++) await store.publish('s', Buffer.from(`m${i}`));
      await store.createConsumer('s', 'c', { ackWaitMs: 100, maxDeliver: 2 });
      const [a, b, c] = await store.fetch('s', 'c', { batch: 3 });
      await a!.ack();
      await b!.nak();
      await c!.term();
      await store.fetch('s', 'c', { batch: 1 }); // b again
      clock.advance(100);
      await store.fetch('s', 'c', { batch: 0 + 1 }); // b past maxDeliver: terminated
      await store.enforceRetention('s');
      await store.consumerInfo('s', 'c');
      const text = await registry.metrics();
      const value = (line: string): number => Number(new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
      expect(value('molo_stream_published_total{store="main",stream="s"}')).toBe(6);
      expect(value('molo_stream_delivered_total{store="main",stream="s"}')).toBe(4);
      expect(value('molo_stream_redelivered_total{store="main",stream="s"}')).toBe(1);
      expect(value('molo_stream_acked_total{store="main",stream="s"}')).toBe(1);
      expect(value('molo_stream_naked_total{store="main",stream="s"}')).toBe(1);
      expect(value('molo_stream_terminated_total{store="main",stream="s",reason="term"}')).toBe(1);
      expect(value('molo_stream_terminated_total{store="main",stream="s",reason="maxDeliver"}')).toBe(1);
      expect(value('molo_stream_evicted_total{store="main",stream="s",reason="count"}')).toBe(2);
      expect(value('molo_stream_consumer_lag{store="main",stream="s",consumer="c"}')).toBe(2);
      expect(value('molo_stream_consumer_pending{store="main",stream="s",consumer="c"}')).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('moves the lag and pending gauges with each fetch, ack, term and publish, not only on consumerInfo', async () => {
    const registry = new Registry();
    const store = await backend.open(new SimulatedClock(), { metrics: registry, name: 'live' });
    const gauges = async (): Promise<{ lag: number; pending: number }> => {
      const text = await registry.metrics();
      const read = (field: string): number => Number(new RegExp(`^molo_stream_consumer_${field}\\{store="live",stream="g",consumer="c"\\} (\\S+)$`, 'm').exec(text)?.[1]);
      return { lag: read('lag'), pending: read('pending') };
    };
    try {
      await store.createStream('g');
      for (let i = 0; i < 10; i++) await store.publish('g', Buffer.from(`m${i}`));
      await store.createConsumer('g', 'c');
      expect(await gauges()).toEqual({ lag: 10, pending: 0 });
      const [a, b] = await store.fetch('g', 'c', { batch: 4 });
      expect(await gauges()).toEqual({ lag: 6, pending: 4 });
      await a!.ack();
      await b!.term();
      expect(await gauges()).toEqual({ lag: 6, pending: 2 });
      await Promise.all([store.publish('g', Buffer.from('x')), store.publish('g', Buffer.from('y'))]);
      expect(await gauges()).toEqual({ lag: 8, pending: 2 });
      await store.fetch('g', 'c', { batch: 100 });
      expect(await gauges()).toEqual({ lag: 0, pending: 10 });
    } finally {
      await store.close();
    }
  });

  it('shows a StreamConsumer actor acks in the pending gauge while its handler is still busy', async () => {
    const registry = new Registry();
    const system = testSystem();
    const store = await backend.open(undefined, { metrics: registry, name: 'actor' });
    const pending = async (): Promise<number> =>
      Number(/^molo_stream_consumer_pending\{store="actor",stream="a",consumer="c"\} (\S+)$/m.exec(await registry.metrics())?.[1]);
    const lag = async (): Promise<number> => Number(/^molo_stream_consumer_lag\{store="actor",stream="a",consumer="c"\} (\S+)$/m.exec(await registry.metrics())?.[1]);
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const handled: number[] = [];
    try {
      await store.createStream('a');
      for (let i = 0; i < 8; i++) await store.publish('a', Buffer.from(`m${i}`));
      const ref = await StreamConsumer.start(system, {
        store,
        stream: 'a',
        consumer: 'c',
        batch: 5,
        pollWaitMs: 60_000,
        handler: async (delivery) => {
          if (delivery.seq === 3) await blocked;
          handled.push(delivery.seq);
        },
      });
      // Sequences 1 and 2 acked, 3 held by the handler, 4 and 5 waiting: no further fetch or consumerInfo runs meanwhile.
      await until(async () => (await pending()) === 3, 'pending 3 after two acks');
      expect(await lag()).toBe(3);
      await store.publish('a', Buffer.from('late'));
      expect(await lag()).toBe(4);
      release();
      await eventually(() => handled.length === 9, 5_000, 'all handled');
      await until(async () => (await pending()) === 0 && (await lag()) === 0, 'gauges at zero');
      await GenServer.stop(system, ref, 'shutdown');
    } finally {
      release();
      await store.close();
    }
  });

  it('opens a span per publish and per delivery handled', async () => {
    provider.spans.length = 0;
    const system = testSystem();
    const store = await backend.open(undefined, { pollIntervalMs: 50 });
    try {
      await store.createStream('t');
      const ref = await StreamConsumer.start(system, { store, stream: 't', consumer: 'c', handler: () => undefined });
      await store.publish('t', Buffer.from('x'));
      await eventually(() => provider.ended(StreamSpanName.deliver).length === 1, 5_000, 'deliver span');
      expect(provider.ended(StreamSpanName.publish)[0]!.attributes).toMatchObject({ 'messaging.destination.name': 't', 'messaging.message.id': 1 });
      expect(provider.ended(StreamSpanName.deliver)[0]!.attributes).toMatchObject({ 'messaging.destination.name': 't', 'messaging.message.id': 1, 'messaging.delivery_count': 1 });
      await GenServer.stop(system, ref, 'shutdown');
    } finally {
      await store.close();
    }
  });
});
