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
