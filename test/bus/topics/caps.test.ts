import { describe, expect, it } from 'vitest';
import { NoProc } from '../../../src/actors/index.js';
import {
  BrokerClosed,
  BusErrorCode,
  ChannelTooLong,
  createBroker,
  InvalidBusOption,
  InvalidTopicPayload,
  PatternLimitReached,
  SubscriptionLimitReached,
  TOPIC_CAPS,
  TOPIC_DEFAULTS,
  TopicDecodeFailed,
  TopicPayloadTooLarge,
} from '../../../src/bus/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { nextTurn, numbered, testBroker } from './helpers.js';

/** Runs `fn`, expecting it to throw; returns the error. */
function thrown(fn: () => unknown): Error & { code: string } {
  try {
    fn();
  } catch (error) {
    return error as Error & { code: string };
  }
  throw new Error('expected a throw');
}

describe('caps', () => {
  it('has the spec defaults', () => {
    expect(TOPIC_DEFAULTS).toMatchObject({ maxChannelLength: 256, maxPayloadBytes: 1024 * 1024, queueCapacity: 1024, maxPatternSubscriptions: 1024 });
  });

  it('channel names: 256 characters, not one more (publish, subscribe and patterns)', () => {
    const broker = testBroker();
    const longest = 'c'.repeat(256);
    expect(broker.subscribe(longest, () => {}).topic).toBe(longest);
    expect(broker.publish(longest, numbered(1))).toBe(1);
    for (const attempt of [
      () => broker.publish(`${longest}x`, numbered(1)),
      () => broker.subscribe(`${longest}x`, () => {}),
      () => broker.subscribePattern(`${'p'.repeat(255)}:*`, () => {}),
    ]) {
      const error = thrown(attempt);
      expect(error).toBeInstanceOf(ChannelTooLong);
      expect(error.code).toBe(BusErrorCode.ChannelTooLong);
      expect(error.message).toContain('maxChannelLength = 256');
      expect((error as ChannelTooLong).limit).toBe(256);
    }
  });

  it('payloads: 1 MiB of bytes, not one byte more; Buffer or Uint8Array only', async () => {
    const broker = testBroker();
    const sizes: number[] = [];
    broker.subscribe('blobs', (message) => void sizes.push(message.payload.byteLength));
    expect(broker.publish('blobs', Buffer.alloc(1024 * 1024))).toBe(1);
    expect(broker.publish('blobs', new Uint8Array(0))).toBe(1);
    const error = thrown(() => broker.publish('blobs', new Uint8Array(1024 * 1024 + 1)));
    expect(error).toBeInstanceOf(TopicPayloadTooLarge);
    expect(error.message).toContain('maxPayloadBytes = 1048576');
    expect((error as TopicPayloadTooLarge).sizeBytes).toBe(1024 * 1024 + 1);
    for (const payload of ['text', { a: 1 }, null, [1, 2], new ArrayBuffer(4)]) {
      expect(() => broker.publish('blobs', payload as unknown as Uint8Array)).toThrow(InvalidTopicPayload);
    }
    expect(() => broker.publish('blobs', numbered(1), { contentType: 'x'.repeat(256) })).toThrow(InvalidTopicPayload);
    expect(() => broker.publish('blobs', numbered(1), { contentType: '' })).toThrow(InvalidTopicPayload);
    await nextTurn();
    // Refused publishes are not published.
    expect(sizes).toEqual([1024 * 1024, 0]);
    expect(broker.stats.published).toBe(2);
  });

  it('pattern subscriptions: 1,024 per broker, then PatternLimitReached; a freed slot can be reused', () => {
    const broker = testBroker();
    const subscriptions = Array.from({ length: 1_024 }, (_, i) => broker.subscribePattern(`p:${i % 7}:*`, () => {}));
    const error = thrown(() => broker.subscribePattern('q:*', () => {}));
    expect(error).toBeInstanceOf(PatternLimitReached);
    expect(error.code).toBe(BusErrorCode.PatternLimit);
    expect(error.message).toContain('maxPatternSubscriptions = 1024');
    // Exact subscriptions are not patterns.
    expect(broker.subscribe('q:1', () => {}).isPattern).toBe(false);
    subscriptions[0]!.unsubscribe();
    expect(broker.subscribePattern('q:*', () => {}).isPattern).toBe(true);
    expect(() => broker.subscribePattern('r:*', () => {})).toThrow(PatternLimitReached);
  });

  it('subscriptions of any kind: maxSubscriptions', () => {
    const broker = testBroker({ maxSubscriptions: 3 });
    broker.subscribe('a', () => {});
    broker.subscribePattern('a:*', () => {});
    const third = broker.subscribe('b', () => {});
    const error = thrown(() => broker.subscribe('c', () => {}));
    expect(error).toBeInstanceOf(SubscriptionLimitReached);
    expect(error.message).toContain('maxSubscriptions = 3');
    third.unsubscribe();
    expect(broker.subscribe('c', () => {}).active).toBe(true);
  });

  it('options are checked at the boundary and name the option', () => {
    for (const [option, value] of [
      ['queueCapacity', 0],
      ['queueCapacity', TOPIC_CAPS.queueCapacity + 1],
      ['maxChannelLength', 257],
      ['maxPayloadBytes', 1.5],
      ['maxPatternSubscriptions', TOPIC_CAPS.maxPatternSubscriptions + 1],
      ['maxSubscriptions', -1],
      ['name', ''],
    ] as const) {
      const error = thrown(() => createBroker({ [option]: value }));
      expect(error).toBeInstanceOf(InvalidBusOption);
      expect((error as InvalidBusOption).option).toBe(option);
    }
    const broker = testBroker();
    expect(() => broker.subscribe('a', () => {}, { queueCapacity: 0 })).toThrow(InvalidBusOption);
    expect(() => broker.subscribe('a', 'not a subscriber' as never)).toThrow(InvalidBusOption);
  });

  it('the seed caps are ceilings: raising an option past one is refused naming it, unless `ceilings` raises it by name', () => {
    for (const [option, value] of [
      ['maxPayloadBytes', 1024 * 1024 + 1],
      ['queueCapacity', 1025],
      ['maxPatternSubscriptions', 1025],
    ] as const) {
      const error = thrown(() => createBroker({ [option]: value }));
      expect(error, option).toBeInstanceOf(InvalidBusOption);
      expect((error as Error).message).toContain(`the ceiling topics.${option}; ceilings.${option} raises it`);
      expect(createBroker({ [option]: value, ceilings: { [option]: value } }).options[option]).toBe(value);
    }
    // Lowering stays free; a subscription's own queue is held to the broker's ceiling too.
    expect(createBroker({ queueCapacity: 16 }).options.queueCapacity).toBe(16);
    const broker = testBroker();
    expect(() => broker.subscribe('a', () => {}, { queueCapacity: 2_048 })).toThrow(/topics\.queueCapacity/);
    const raised = testBroker({ ceilings: { queueCapacity: 2_048 } });
    expect(raised.subscribe('a', () => {}, { queueCapacity: 2_048 }).active).toBe(true);
    // The ceilings themselves: at least the seed's, at most the hard caps, known keys only.
    for (const ceilings of [{ queueCapacity: 512 }, { queueCapacity: TOPIC_CAPS.queueCapacity + 1 }, { queueCapcity: 2_048 }]) {
      expect(() => createBroker({ ceilings } as never), JSON.stringify(ceilings)).toThrow(InvalidBusOption);
    }
    expect(thrown(() => createBroker({ ceilings: { queueCapcity: 2_048 } } as never))?.message).toContain('did you mean queueCapacity?');
  });

  it('actors: the broker needs the system, and the actor must be alive', async () => {
    const system = testSystem();
    const ref = system.spawn(() => {});
    expect((thrown(() => testBroker().subscribe('a', ref)) as InvalidBusOption).option).toBe('system');
    const broker = testBroker({ system });
    system.exit(ref, 'shutdown');
    await eventually(() => !system.isAlive(ref));
    expect(() => broker.subscribe('a', ref)).toThrow(NoProc);
    expect(broker.channelSubscriptions).toBe(0);
  });

  it('a closed broker refuses publish and subscribe, and discards what was queued', async () => {
    const broker = testBroker({ name: 'gone' });
    const seen: number[] = [];
    const subscription = broker.subscribe('a', () => void seen.push(1));
    broker.publish('a', numbered(1));
    broker.close();
    broker.close();
    await nextTurn();
    expect(seen).toEqual([]);
    expect(subscription.active).toBe(false);
    expect(subscription.discarded).toBe(1);
    const error = thrown(() => broker.publish('a', numbered(1)));
    expect(error).toBeInstanceOf(BrokerClosed);
    expect(error.message).toContain("'gone'");
    expect(() => broker.subscribe('a', () => {})).toThrow(BrokerClosed);
  });

  it('JSON is a helper: values that have no JSON form are refused, bytes that are not JSON fail to decode', async () => {
    const broker = testBroker();
    const errors: unknown[] = [];
    broker.subscribe('raw', (message) => {
      try {
        message.json();
      } catch (error) {
        errors.push(error);
      }
    });
    expect(() => broker.publishJson('raw', undefined)).toThrow(InvalidTopicPayload);
    expect(() => broker.publishJson('raw', 10n)).toThrow(InvalidTopicPayload);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => broker.publishJson('raw', cycle)).toThrow(InvalidTopicPayload);
    // Too large once encoded.
    expect(() => broker.publishJson('raw', 'x'.repeat(1024 * 1024))).toThrow(TopicPayloadTooLarge);
    broker.publish('raw', Buffer.from('{not json'));
    broker.publish('raw', new Uint8Array([0xff, 0xfe]));
    await nextTurn();
    expect(errors).toHaveLength(2);
    for (const error of errors) {
      expect(error).toBeInstanceOf(TopicDecodeFailed);
      expect((error as TopicDecodeFailed).channel).toBe('raw');
    }
  });
});
