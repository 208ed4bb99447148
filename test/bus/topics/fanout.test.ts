import { describe, expect, it } from 'vitest';
import { isTopicMessage, type TopicMessage } from '../../../src/bus/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { nextTurn, numbered, numberOf, testBroker } from './helpers.js';

const MESSAGES = 10_000;
const SUBSCRIBERS = 100;
const BATCH = 1_000;

describe('fan-out (validation step 9)', () => {
  it('delivers 10k messages to 100 callback subscribers, in order, dropping none', async () => {
    const broker = testBroker();
    const received = Array.from({ length: SUBSCRIBERS }, () => [] as number[]);
    const subscriptions = received.map((list) => broker.subscribe('orders:created', (message) => void list.push(numberOf(message))));

    for (let sent = 0; sent < MESSAGES; ) {
      for (const end = Math.min(sent + BATCH, MESSAGES); sent < end; sent++) {
        expect(broker.publish('orders:created', numbered(sent))).toBe(SUBSCRIBERS);
      }
      await nextTurn();
    }
    await eventually(() => received.every((list) => list.length === MESSAGES), 10_000, 'every delivery');

    const expected = Array.from({ length: MESSAGES }, (_, i) => i);
    for (const list of received) expect(list).toEqual(expected);
    for (const subscription of subscriptions) {
      expect(subscription.dropped).toBe(0);
      expect(subscription.delivered).toBe(MESSAGES);
    }
    expect(broker.stats).toMatchObject({ published: MESSAGES, enqueued: MESSAGES * SUBSCRIBERS, dropped: 0, unrouted: 0 });
  });

  it('delivers 10k messages to 100 subscriber actors, in order, dropping none, when the publisher waits for them', async () => {
    const system = testSystem();
    const broker = testBroker({ system });
    const received = Array.from({ length: SUBSCRIBERS }, () => [] as number[]);
    let handled = 0;
    const actors = received.map((list) =>
      system.spawn((message: unknown) => {
        if (!isTopicMessage(message)) throw new Error('not a topic message');
        list.push(numberOf(message));
        handled++;
      }),
    );
    const subscriptions = actors.map((ref) => broker.subscribe('orders:created', ref));

    // Actors run on the kernel's budget, so a publisher that outruns them loses their oldest
    // messages by design; waiting after each batch of 1,000 is the flow control that prevents it.
    for (let sent = 0; sent < MESSAGES; ) {
      for (const end = Math.min(sent + BATCH, MESSAGES); sent < end; sent++) broker.publish('orders:created', numbered(sent));
      const target = sent * SUBSCRIBERS;
      await eventually(() => handled === target, 10_000, `batch up to ${sent}`);
    }

    const expected = Array.from({ length: MESSAGES }, (_, i) => i);
    for (const list of received) expect(list).toEqual(expected);
    for (const subscription of subscriptions) expect(subscription.dropped).toBe(0);
    for (const ref of actors) system.exit(ref, 'shutdown');
    await eventually(() => system.actorCount === 0);
    // An exited actor's subscription ends with it.
    expect(subscriptions.every((subscription) => !subscription.active)).toBe(true);
    expect(broker.channelSubscriptions).toBe(0);
  });

  it('shares one message object among the exact subscribers of a channel', async () => {
    const broker = testBroker();
    const seen: TopicMessage[] = [];
    for (let i = 0; i < 3; i++) broker.subscribe('a', (message) => void seen.push(message));
    broker.publish('a', numbered(1));
    await nextTurn();
    expect(seen).toHaveLength(3);
    expect(seen[1]).toBe(seen[0]);
    expect(seen[2]).toBe(seen[0]);
  });
});
