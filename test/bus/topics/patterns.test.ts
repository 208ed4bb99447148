import { describe, expect, it } from 'vitest';
import { BusErrorCode, InvalidChannel, type TopicMessage } from '../../../src/bus/index.js';
import { nextTurn, numbered, testBroker } from './helpers.js';

const CHANNELS = ['orders', 'orders:42', 'orders:42:x', 'orders:43', 'users:42', 'users:42:x', 'orders:', ':42', 'a:b:c:d'];

/** The channels of CHANNELS that reach a subscription to `pattern`. */
async function reached(pattern: string): Promise<string[]> {
  const broker = testBroker();
  const seen: string[] = [];
  broker.subscribePattern(pattern, (message) => void seen.push(message.channel));
  for (const channel of CHANNELS) broker.publish(channel, numbered(0));
  await nextTurn();
  broker.close();
  return seen;
}

describe('pattern subscriptions', () => {
  it.each([
    ['orders:*', ['orders:42', 'orders:43', 'orders:']],
    ['*', ['orders']],
    ['*:42', ['orders:42', 'users:42', ':42']],
    ['*:*', ['orders:42', 'orders:43', 'users:42', 'orders:', ':42']],
    ['*:42:*', ['orders:42:x', 'users:42:x']],
    ['orders:*:x', ['orders:42:x']],
    ['*:*:*:*', ['a:b:c:d']],
    ['a:*:c', []],
    ['orders:42', ['orders:42']],
  ])('%s matches exactly one segment per *', async (pattern, expected) => {
    expect(await reached(pattern)).toEqual(expected);
  });

  it('a message through a pattern names the pattern; one object per pattern, shared by its subscribers', async () => {
    const broker = testBroker();
    const byPattern: TopicMessage[] = [];
    const byOther: TopicMessage[] = [];
    const exact: TopicMessage[] = [];
    broker.subscribePattern('orders:*', (message) => void byPattern.push(message));
    broker.subscribePattern('orders:*', (message) => void byPattern.push(message));
    broker.subscribePattern('*:42', (message) => void byOther.push(message));
    broker.subscribe('orders:42', (message) => void exact.push(message));

    expect(broker.publish('orders:42', numbered(7), { contentType: 'application/x-order' })).toBe(4);
    await nextTurn();

    expect(byPattern).toHaveLength(2);
    expect(byPattern[0]).toBe(byPattern[1]);
    expect(byPattern[0]).toMatchObject({ kind: 'topic', channel: 'orders:42', pattern: 'orders:*', contentType: 'application/x-order' });
    expect(byOther[0]).toMatchObject({ channel: 'orders:42', pattern: '*:42' });
    expect(exact[0]!.pattern).toBeUndefined();
    // Same payload and timestamp whichever way it came.
    expect(byOther[0]!.payload).toBe(exact[0]!.payload);
    expect(byPattern[0]!.publishedAt).toBe(exact[0]!.publishedAt);
  });

  it('with 1,024 patterns, each publish reaches exactly the matching ones', async () => {
    const broker = testBroker();
    const hits = new Map<string, number>();
    const patterns: string[] = [];
    for (let i = 0; i < 1_024; i++) {
      // Literal and wildcard branches at every depth: tenant:<i mod 32>:<kind>:<*|id>.
      const pattern = i % 2 === 0 ? `tenant:${i % 32}:k${i >> 5}:*` : `tenant:*:k${i >> 5}:${i % 32}`;
      patterns.push(pattern);
      broker.subscribePattern(pattern, (message) => void hits.set(message.pattern!, (hits.get(message.pattern!) ?? 0) + 1));
    }
    expect(broker.patternSubscriptions).toBe(1_024);
    const matches = (pattern: string, channel: string): boolean => {
      const p = pattern.split(':');
      const c = channel.split(':');
      return p.length === c.length && p.every((segment, i) => segment === '*' || segment === c[i]);
    };
    const channels = ['tenant:4:k3:9', 'tenant:31:k31:0', 'tenant:4:k3', 'tenant:4:k3:9:extra', 'other:4:k3:9', 'tenant:99:k0:0'];
    let expectedTotal = 0;
    for (const channel of channels) {
      const expected = patterns.filter((pattern) => matches(pattern, channel)).length;
      expectedTotal += expected;
      expect(broker.publish(channel, numbered(1)), channel).toBe(expected);
    }
    await nextTurn();
    expect([...hits.values()].reduce((a, b) => a + b, 0)).toBe(expectedTotal);
    expect(expectedTotal).toBeGreaterThan(0);
    for (const [pattern] of hits) expect(channels.some((channel) => matches(pattern, channel))).toBe(true);
  });

  it('unsubscribing the last subscription of a pattern stops its deliveries and frees it', async () => {
    const broker = testBroker();
    const seen: string[] = [];
    const a = broker.subscribePattern('orders:*', (message) => void seen.push(`a ${message.channel}`));
    const b = broker.subscribePattern('orders:*', (message) => void seen.push(`b ${message.channel}`));
    broker.publish('orders:1', numbered(1));
    await nextTurn();
    expect(a.unsubscribe()).toBe(true);
    broker.publish('orders:2', numbered(2));
    await nextTurn();
    expect(b.unsubscribe()).toBe(true);
    expect(broker.patternSubscriptions).toBe(0);
    expect(broker.publish('orders:3', numbered(3))).toBe(0);
    await nextTurn();
    expect(seen).toEqual(['a orders:1', 'b orders:1', 'b orders:2']);
  });

  it('refuses * inside a segment, and * in channel names', () => {
    const broker = testBroker();
    for (const pattern of ['ord*', 'orders:4*', '**', 'a:*b:c']) {
      expect(() => broker.subscribePattern(pattern, () => {})).toThrow(InvalidChannel);
    }
    expect(() => broker.subscribe('orders:*', () => {})).toThrow(InvalidChannel);
    try {
      broker.publish('orders:*', numbered(1));
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidChannel).code).toBe(BusErrorCode.InvalidChannel);
    }
    expect(() => broker.subscribePattern('', () => {})).toThrow(InvalidChannel);
  });
});
