/**
 * What only the memory store does: LRU eviction at its key and byte caps, its incremental sweep on
 * the real clock, and the structures under it (byte-order comparison, the chunked sorted key list).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import { InvalidDataConfig, KvCapExceeded } from '../../../src/data/index.js';
import { compareKeys } from '../../../src/data/kv/caps.js';
import { createMemoryKv, KV_LIMITS } from '../../../src/data/kv/index.js';
import { SortedKeys } from '../../../src/data/kv/sorted-keys.js';
import { eventually } from '../../support/systems.js';

const bytes = (text: string): Buffer => Buffer.from(text);

describe('memory KV store', () => {
  it('evicts the least recently used key beyond maxKeys (reads count as use)', async () => {
    const store = createMemoryKv({ maxKeys: 3 });
    await store.set('a', bytes('1'));
    await store.set('b', bytes('2'));
    await store.set('c', bytes('3'));
    await store.get('a');
    await store.set('d', bytes('4'));
    expect((await store.scan('')).keys).toEqual(['a', 'c', 'd']);
    expect(store.stats()).toMatchObject({ keys: 3, evictions: 1 });
    await store.close();
  });

  it('evicts by bytes of keys and values beyond maxBytes, and refuses a value that alone is larger', async () => {
    const store = createMemoryKv({ maxBytes: 100 });
    await store.set('k1', Buffer.alloc(40));
    await store.set('k2', Buffer.alloc(40));
    expect(store.stats().bytes).toBe(84);
    await store.set('k3', Buffer.alloc(40));
    expect((await store.scan('')).keys).toEqual(['k2', 'k3']);
    await store.set('k2', Buffer.alloc(10)); // shrinking frees room
    expect(store.stats().bytes).toBe(54);
    const error = await store.set('huge', Buffer.alloc(97)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KvCapExceeded);
    expect((error as KvCapExceeded).cap).toBe('kv.maxBytes');
    expect((await store.scan('')).keys).toEqual(['k2', 'k3']);
    await store.close();
  });

  it('keeps versions growing across eviction and clear()', async () => {
    const store = createMemoryKv({ maxKeys: 1 });
    const first = await store.set('a', bytes('1'));
    const second = await store.set('b', bytes('2'));
    expect(await store.get('a')).toBeUndefined();
    store.clear();
    const third = await store.set('a', bytes('3'));
    expect(second).toBeGreaterThan(first);
    expect(third).toBeGreaterThan(second);
    await store.close();
  });

  it('validates its options', () => {
    expect(() => createMemoryKv({ maxKeys: KV_LIMITS.maxKeys + 1 })).toThrow(InvalidDataConfig);
    expect(() => createMemoryKv({ maxBytes: 0 })).toThrow(InvalidDataConfig);
    expect(() => createMemoryKv({ sweepIntervalMs: 1 })).toThrow(InvalidDataConfig);
    expect(() => createMemoryKv({ sweepBatch: 0 })).toThrow(InvalidDataConfig);
  });

  it('sweeps on the real clock while keys with a TTL are held, and stops on close', async () => {
    const store = createMemoryKv({ sweepIntervalMs: 10 });
    for (let i = 0; i < 100; i++) await store.set(`k${i}`, bytes('x'), { ttlMs: 20 });
    await store.set('kept', bytes('x'));
    await eventually(() => store.size === 1, 2_000, 'the sweep');
    expect(store.stats().expirations).toBe(100);
    await store.close();
    // Closed: a new TTL key arms nothing (it stays until read).
    await store.set('after', bytes('x'), { ttlMs: 1 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(store.size).toBe(2);
  });

  it('sweeps in batches: a tick removes at most sweepBatch keys, the next tick follows at once', async () => {
    const clock = new SimulatedClock();
    const store = createMemoryKv({ clock, sweepBatch: 100, sweepIntervalMs: 1_000 });
    for (let i = 0; i < 250; i++) await store.set(`k${i}`, bytes('x'), { ttlMs: 5_000 });
    expect(await store.sweepExpired()).toBe(0);
    clock.advance(5_000);
    // The sweep woke at the first expiry and ran three zero-delay ticks within the advance.
    expect(store.size).toBe(0);
    for (let i = 0; i < 250; i++) await store.set(`k${i}`, bytes('x'), { ttlMs: 1 });
    // Past the expiry, before the tick (the interval is the shortest sleep): explicit batches.
    clock.advance(1);
    expect(await store.sweepExpired()).toBe(100);
    expect(await store.sweepExpired()).toBe(100);
    expect(await store.sweepExpired()).toBe(50);
    await store.close();
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('key order', () => {
  it('compareKeys orders like UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 6 }), (a, b) => {
        expect(Math.sign(compareKeys(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { seed: 42, numRuns: 2_000 },
    );
  });

  it('SortedKeys stays sorted through many inserts and deletes (chunk splits and removals)', () => {
    const sorted = new SortedKeys();
    const reference = new Set<string>();
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    for (let i = 0; i < 6_000; i++) {
      const key = `k${Math.floor(random() * 4_000)}`;
      if (random() < 0.65) {
        sorted.add(key);
        reference.add(key);
      } else {
        expect(sorted.delete(key)).toBe(reference.delete(key));
      }
    }
    const expected = [...reference].sort(compareKeys);
    expect(sorted.size).toBe(expected.length);
    expect([...sorted.from('', false)]).toEqual(expected);
    const middle = expected[Math.floor(expected.length / 2)]!;
    expect([...sorted.from(middle, true)]).toEqual(expected.slice(expected.indexOf(middle) + 1));
    expect([...sorted.from(middle, false)]).toEqual(expected.slice(expected.indexOf(middle)));
  });
});
