import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SimulatedClock, type Ref } from '../../../src/actors/index.js';
import { isTopicMessage, TopicMessage } from '../../../src/bus/index.js';
import { createLogger } from '../../../src/telemetry/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { increasing, nextTurn, numbered, numberOf, testBroker } from './helpers.js';

describe('delivery', () => {
  it('a publish nobody subscribes to is a counted no-op', async () => {
    const registry = new Registry();
    const broker = testBroker({ registry, name: 'quiet' });
    const seen: string[] = [];
    broker.subscribe('orders:1', (message) => void seen.push(message.channel));
    expect(broker.publish('orders:2', numbered(1))).toBe(0);
    expect(broker.publish('orders', numbered(1))).toBe(0);
    expect(broker.publish('orders:1', numbered(1))).toBe(1);
    await nextTurn();
    expect(seen).toEqual(['orders:1']);
    expect(broker.stats).toMatchObject({ published: 3, unrouted: 2, enqueued: 1, dropped: 0 });
    expect(await registry.getSingleMetricAsString('molo_pubsub_unrouted_total')).toContain('molo_pubsub_unrouted_total{broker="quiet"} 2');
    expect(await registry.getSingleMetricAsString('molo_pubsub_subscriptions')).toContain('molo_pubsub_subscriptions{broker="quiet",kind="channel"} 1');
  });

  it('publish runs no subscriber code in its own stack', async () => {
    const broker = testBroker();
    const calls: string[] = [];
    broker.subscribe('a', () => void calls.push('callback'));
    broker.publish('a', numbered(1));
    calls.push('after publish');
    await Promise.resolve();
    await nextTurn();
    expect(calls).toEqual(['after publish', 'callback']);
  });

  it('unsubscribe stops delivery at once, discarding what was queued; the others go on', async () => {
    const broker = testBroker();
    const a: number[] = [];
    const b: number[] = [];
    const subA = broker.subscribe('a', (message) => void a.push(numberOf(message)));
    broker.subscribe('a', (message) => void b.push(numberOf(message)));
    broker.publish('a', numbered(1));
    await nextTurn();
    broker.publish('a', numbered(2));
    expect(subA.unsubscribe()).toBe(true);
    expect(subA.unsubscribe()).toBe(false);
    expect(broker.unsubscribe(subA)).toBe(false);
    expect(broker.publish('a', numbered(3))).toBe(1);
    await nextTurn();
    expect(a).toEqual([1]);
    expect(b).toEqual([1, 2, 3]);
    expect(subA).toMatchObject({ active: false, delivered: 1, discarded: 1, dropped: 0 });
  });

  it('a callback may unsubscribe itself mid-drain: nothing more reaches it', async () => {
    const broker = testBroker();
    const seen: number[] = [];
    const subscription = broker.subscribe('a', (message) => {
      seen.push(numberOf(message));
      if (numberOf(message) === 2) subscription.unsubscribe();
    });
    for (let n = 1; n <= 5; n++) broker.publish('a', numbered(n));
    await nextTurn();
    expect(seen).toEqual([1, 2]);
    expect(subscription.discarded).toBe(3);
  });

  it('a throwing callback is counted and logged, and delivery to it and to others goes on', async () => {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line.length > 0) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = createLogger({ destination, level: 'warn' });
    const registry = new Registry();
    const broker = testBroker({ logger, registry, name: 'faulty' });
    const good: number[] = [];
    const bad = broker.subscribe('a', (message) => {
      if (numberOf(message) % 2 === 0) throw new Error(`boom ${numberOf(message)}`);
    });
    const rejecting = broker.subscribe('a', async () => {
      throw new Error('async boom');
    });
    broker.subscribe('a', (message) => void good.push(numberOf(message)));
    for (let n = 0; n < 40; n++) broker.publish('a', numbered(n));
    await eventually(() => good.length === 40 && rejecting.queued === 0);
    await nextTurn();
    expect(good).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(bad).toMatchObject({ delivered: 40, failures: 20, active: true });
    expect(rejecting).toMatchObject({ delivered: 40, failures: 40 });
    expect(broker.stats.subscriberErrors).toBe(60);
    expect(await registry.getSingleMetricAsString('molo_pubsub_subscriber_errors_total')).toContain('{broker="faulty"} 60');
    // Logged sparingly: every failure up to 8, then the 16th, 32nd...
    const logged = lines.filter((line) => line.event === 'pubsub.subscriber_failed');
    expect(logged.filter((line) => line.subscription === bad.id).map((line) => line.failures)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 16]);
    expect(logged.filter((line) => line.subscription === rejecting.id).map((line) => line.failures)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 16, 32]);
    expect(logged[0]).toMatchObject({ broker: 'faulty', topic: 'a', level: 40 });
    expect((logged[0]!.err as { message: string }).message).toBe('boom 0');
  });

  it('order holds per publisher and channel, with publishers interleaving', async () => {
    // A small kernel batch makes the publishers take turns; the whole run is published before the
    // broker's first drain, so the queues are sized to hold it.
    const system = testSystem({ batch: 4 });
    const broker = testBroker({ system, queueCapacity: 2_048, ceilings: { queueCapacity: 2_048 } });
    const received: [string, number][] = [];
    broker.subscribe('feed', (message) => void received.push([message.json<{ from: string }>().from, message.json<{ n: number }>().n]));
    const viaPattern: [string, number][] = [];
    broker.subscribePattern('*', (message) => void viaPattern.push([message.json<{ from: string }>().from, message.json<{ n: number }>().n]));
    const PER_PUBLISHER = 500;
    // Each publisher is an actor that publishes one message per message it handles, so the kernel interleaves them.
    const publishers: Ref[] = ['p1', 'p2', 'p3'].map((from) =>
      system.spawn((n: unknown) => {
        if (typeof n === 'number') broker.publishJson('feed', { from, n });
      }),
    );
    for (let n = 0; n < PER_PUBLISHER; n++) for (const publisher of publishers) system.send(publisher, n);
    await eventually(() => received.length === 3 * PER_PUBLISHER && viaPattern.length === 3 * PER_PUBLISHER);
    for (const stream of [received, viaPattern]) {
      for (const from of ['p1', 'p2', 'p3']) {
        const sequence = stream.filter(([publisher]) => publisher === from).map(([, n]) => n);
        expect(sequence).toHaveLength(PER_PUBLISHER);
        expect(increasing(sequence)).toBe(true);
      }
    }
    // They did interleave.
    expect(received.slice(0, 12).map(([from]) => from)).toEqual(['p1', 'p1', 'p1', 'p1', 'p2', 'p2', 'p2', 'p2', 'p3', 'p3', 'p3', 'p3']);
    for (const publisher of publishers) system.exit(publisher, 'shutdown');
  });

  it('messages carry channel, bytes, content type and the clock’s wall time; JSON is a helper on top', async () => {
    const clock = new SimulatedClock(0, Date.UTC(2026, 5, 1));
    const broker = testBroker({ clock });
    const seen: TopicMessage[] = [];
    broker.subscribe('a', (message) => void seen.push(message));
    broker.publish('a', Buffer.from('héllo'), { contentType: 'text/plain; charset=utf-8' });
    clock.advance(1_500);
    broker.publishJson('a', { id: 7, tags: ['x'] });
    broker.publish('a', numbered(3));
    await nextTurn();
    expect(seen.map((message) => message.contentType)).toEqual(['text/plain; charset=utf-8', 'application/json', 'application/octet-stream']);
    expect(seen[0]!.text()).toBe('héllo');
    expect(seen[0]!.publishedAt).toBe(Date.UTC(2026, 5, 1));
    expect(seen[1]!.json()).toEqual({ id: 7, tags: ['x'] });
    expect(seen[1]!.publishedAt).toBe(Date.UTC(2026, 5, 1) + 1_500);
    expect(seen[1]!.payload).toBeInstanceOf(Uint8Array);
    expect(seen.every((message) => message instanceof TopicMessage && message.kind === 'topic')).toBe(true);
  });

  it('an actor subscriber gets TopicMessages in its mailbox; its exit ends the subscription', async () => {
    const system = testSystem();
    const broker = testBroker({ system });
    const received: unknown[] = [];
    const actor = system.spawn((message: unknown) => void received.push(message));
    const exact = broker.subscribe('orders:1', actor);
    const pattern = broker.subscribePattern('orders:*', actor);
    broker.publishJson('orders:1', { total: 12 });
    await eventually(() => received.length === 2);
    expect(received.every(isTopicMessage)).toBe(true);
    const patterns = (received as TopicMessage[]).map((message) => message.pattern).sort();
    expect(patterns).toEqual(['orders:*', undefined]);
    expect((received[0] as TopicMessage).json()).toEqual({ total: 12 });

    system.exit(actor, 'shutdown');
    await eventually(() => !exact.active && !pattern.active);
    expect(broker.stats).toMatchObject({ channelSubscriptions: 0, patternSubscriptions: 0 });
    expect(broker.publish('orders:1', numbered(1))).toBe(0);
  });

  it('the same subscriber may hold several subscriptions; each delivers on its own', async () => {
    const broker = testBroker();
    const seen: string[] = [];
    const callback = (message: TopicMessage): void => void seen.push(`${message.channel} ${message.pattern ?? '-'}`);
    broker.subscribe('a:1', callback);
    broker.subscribe('a:1', callback);
    broker.subscribePattern('a:*', callback);
    expect(broker.publish('a:1', numbered(1))).toBe(3);
    await nextTurn();
    expect(seen.sort()).toEqual(['a:1 -', 'a:1 -', 'a:1 a:*']);
  });
});
