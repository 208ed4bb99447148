import { performance } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { isTopicMessage } from '../../../src/bus/index.js';
import { eventually, sleep, testSystem } from '../../support/systems.js';
import { increasing, nextTurn, numbered, numberOf, testBroker } from './helpers.js';

const MESSAGES = 5_000;
const BATCH = 1_000;
const CAPACITY = 16;

/** Publishes 0..MESSAGES-1 in batches, yielding between them; returns the longest synchronous batch in ms. */
async function publishAll(publish: (n: number) => unknown): Promise<number> {
  let longest = 0;
  for (let sent = 0; sent < MESSAGES; ) {
    const start = performance.now();
    for (const end = Math.min(sent + BATCH, MESSAGES); sent < end; sent++) {
      // Synchronous: a number, never a promise to wait on.
      expect(typeof publish(sent)).toBe('number');
    }
    longest = Math.max(longest, performance.now() - start);
    await nextTurn();
  }
  return longest;
}

async function metricValue(registry: Registry, name: string, broker: string): Promise<number> {
  const text = await registry.getSingleMetricAsString(name);
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{broker="${broker}"}`));
  return Number(line?.split(' ')[1]);
}

describe('a slow subscriber', () => {
  it('an actor whose handler awaits: its oldest messages are dropped and counted, the publisher never waits', async () => {
    const system = testSystem();
    const registry = new Registry();
    const broker = testBroker({ system, registry, name: 'slow' });
    const received: number[] = [];
    const slow = system.spawn(async (message: unknown) => {
      if (!isTopicMessage(message)) return;
      received.push(numberOf(message));
      await sleep(2);
    });
    const subscription = broker.subscribe('ticks', slow, { queueCapacity: CAPACITY });
    const fast: number[] = [];
    const fastSubscription = broker.subscribe('ticks', (message) => void fast.push(numberOf(message)));
    let deepestMailbox = 0;
    const sampler = broker.subscribe('ticks', () => {
      deepestMailbox = Math.max(deepestMailbox, system.info(slow)!.mailboxLength);
    });

    const longestBatchMs = await publishAll((n) => broker.publish('ticks', numbered(n)));

    // Had publish waited for the subscriber (2 ms a message), one batch would take 2 s.
    expect(longestBatchMs).toBeLessThan(500);
    expect(received.length).toBeLessThan(MESSAGES / 10);
    // The backlog stays in the broker, where it is bounded: the mailbox never holds more than the queue.
    expect(deepestMailbox).toBeLessThanOrEqual(CAPACITY);

    await eventually(() => subscription.queued === 0 && system.info(slow)!.mailboxLength === 0 && received.length === subscription.delivered, 10_000, 'the slow actor to catch up');
    await sleep(10);
    expect(subscription.delivered).toBe(received.length);
    expect(subscription.dropped).toBeGreaterThan(0);
    expect(subscription.delivered + subscription.dropped).toBe(MESSAGES);
    // In order, and the newest survive: drops are the oldest.
    expect(increasing(received)).toBe(true);
    expect(received.at(-1)).toBe(MESSAGES - 1);
    expect(received.slice(-CAPACITY)).toEqual(Array.from({ length: CAPACITY }, (_, i) => MESSAGES - CAPACITY + i));
    // Others on the channel lost nothing.
    expect(fast).toEqual(Array.from({ length: MESSAGES }, (_, i) => i));
    expect(fastSubscription.dropped).toBe(0);
    expect(sampler.dropped).toBe(0);

    expect(broker.stats.dropped).toBe(subscription.dropped);
    expect(await metricValue(registry, 'molo_pubsub_dropped_total', 'slow')).toBe(subscription.dropped);
    expect(await metricValue(registry, 'molo_pubsub_published_total', 'slow')).toBe(MESSAGES);
    system.exit(slow, 'shutdown');
  });

  it('an async callback: one call at a time, oldest dropped beyond its queue, newest delivered', async () => {
    const broker = testBroker();
    const received: number[] = [];
    let running = 0;
    let overlapped = false;
    const subscription = broker.subscribe(
      'ticks',
      async (message) => {
        overlapped ||= running > 0;
        running++;
        received.push(numberOf(message));
        await sleep(1);
        running--;
      },
      { queueCapacity: CAPACITY },
    );

    const longestBatchMs = await publishAll((n) => broker.publish('ticks', numbered(n)));
    expect(longestBatchMs).toBeLessThan(500);
    // Drops are known as soon as they happen, before the subscriber gets to them: every message is
    // delivered, dropped or queued, and at most CAPACITY are queued.
    expect(subscription.queued).toBeLessThanOrEqual(CAPACITY);
    expect(subscription.delivered + subscription.dropped + subscription.queued).toBe(MESSAGES);
    expect(subscription.dropped).toBeGreaterThan(MESSAGES / 2);

    await eventually(() => subscription.queued === 0 && running === 0, 10_000, 'the slow callback to catch up');
    expect(overlapped).toBe(false);
    expect(increasing(received)).toBe(true);
    expect(received.at(-1)).toBe(MESSAGES - 1);
    expect(subscription.delivered).toBe(received.length);
    expect(subscription.delivered + subscription.dropped).toBe(MESSAGES);
    expect(broker.stats.dropped).toBe(subscription.dropped);
  });

  it('an actor with a small mailbox of its own: the smaller bound applies, the rest waits in the broker', async () => {
    const system = testSystem();
    const broker = testBroker({ system });
    const received: number[] = [];
    let deepest = 0;
    const actor = system.spawn(
      async (message: unknown) => {
        if (!isTopicMessage(message)) return;
        received.push(numberOf(message));
        await sleep(1);
      },
      { mailbox: { capacity: 4, overflow: 'reject' } },
    );
    const subscription = broker.subscribe('ticks', actor, { queueCapacity: 64 });
    for (let n = 0; n < 200; n++) {
      broker.publish('ticks', numbered(n));
      deepest = Math.max(deepest, system.info(actor)!.mailboxLength);
      if (n % 50 === 49) await nextTurn();
    }
    await eventually(() => subscription.queued === 0 && system.info(actor)!.mailboxLength === 0, 10_000, 'the actor to catch up');
    await sleep(5);
    expect(deepest).toBeLessThanOrEqual(4);
    expect(increasing(received)).toBe(true);
    expect(received.at(-1)).toBe(199);
    expect(subscription.delivered).toBe(received.length);
    expect(subscription.delivered + subscription.dropped).toBe(200);
    // The mailbox refused nothing: the broker only hands over what fits.
    expect(system.info(actor)!.messagesDropped).toBe(0);
    system.exit(actor, 'shutdown');
  });
});
