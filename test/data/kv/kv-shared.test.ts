/**
 * One suite, three backends (memory, SQLite, Postgres): every KvStore must pass it unchanged, under a
 * SimulatedClock so that expiry is decided by the clock, not by the database server's time.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import { KvCapExceeded, KvInvalidArgument } from '../../../src/data/index.js';
import { getJson, getJsonEntry, getText, KV_LIMITS, setJson, setText, type KvStore } from '../../../src/data/kv/index.js';
import { eventuallyAsync, KV_BACKENDS, type OpenedStore } from './stores.js';

const bytes = (text: string): Buffer => Buffer.from(text);
const text = (entry: { value: Buffer } | undefined): string | undefined => entry?.value.toString();

/** All live keys under `prefix`, page by page, with the page sizes. */
async function scanAll(store: KvStore, prefix: string, limit?: number): Promise<{ keys: string[]; pages: number[] }> {
  const keys: string[] = [];
  const pages: number[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1_000; guard++) {
    const page = await store.scan(prefix, { cursor, limit });
    keys.push(...page.keys);
    pages.push(page.keys.length);
    if (page.next === undefined) return { keys, pages };
    cursor = page.next;
  }
  throw new Error('scan did not end');
}

/** Writes `keys` with bounded concurrency (a SQLite writer and a small pool behind). */
async function setMany(store: KvStore, keys: readonly string[], value = bytes('v')): Promise<void> {
  for (let i = 0; i < keys.length; i += 200) await Promise.all(keys.slice(i, i + 200).map((key) => store.set(key, value)));
}

describe.each(KV_BACKENDS)('KvStore on $name', (backend) => {
  let clock: SimulatedClock;
  let opened: OpenedStore;
  let store: KvStore;

  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown(), 30_000);

  beforeEach(async () => {
    clock = new SimulatedClock();
    opened = await backend.open(clock);
    store = opened.store;
  });

  afterEach(async () => {
    await opened.close();
  });

  it('gets, sets, deletes and tells whether a key exists', async () => {
    expect(await store.get('missing')).toBeUndefined();
    expect(await store.exists('missing')).toBe(false);
    expect(await store.delete('missing')).toBe(false);

    const version = await store.set('k', bytes('one'));
    expect(version).toBeGreaterThan(0);
    expect(await store.get('k')).toEqual({ value: bytes('one'), version });
    expect(await store.exists('k')).toBe(true);

    const second = await store.set('k', bytes('two'));
    expect(second).toBeGreaterThan(version);
    expect(text(await store.get('k'))).toBe('two');

    expect(await store.delete('k')).toBe(true);
    expect(await store.get('k')).toBeUndefined();
    expect(await store.exists('k')).toBe(false);
    expect(await store.delete('k')).toBe(false);
  });

  it('stores bytes exactly: empty, every byte value, a Uint8Array view; callers cannot change stored bytes', async () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await store.set('empty', Buffer.alloc(0));
    await store.set('all', all);
    const backing = new Uint8Array([9, 9, 1, 2, 3, 9]);
    await store.set('view', backing.subarray(2, 5));
    backing[3] = 42; // after set: must not reach the store
    expect((await store.get('empty'))!.value).toEqual(Buffer.alloc(0));
    expect((await store.get('all'))!.value.equals(all)).toBe(true);
    const view = (await store.get('view'))!.value;
    expect([...view]).toEqual([1, 2, 3]);
    view[0] = 77; // the returned bytes are the caller's own
    expect([...(await store.get('view'))!.value]).toEqual([1, 2, 3]);
  });

  it('has text and JSON helpers', async () => {
    await setText(store, 'greeting', 'héllo 😀');
    expect(await getText(store, 'greeting')).toBe('héllo 😀');
    await setJson(store, 'doc', { a: [1, 2], b: null, c: 'x' });
    expect(await getJson(store, 'doc')).toEqual({ a: [1, 2], b: null, c: 'x' });
    const entry = await getJsonEntry<{ a: number[] }>(store, 'doc');
    expect(entry?.value.a).toEqual([1, 2]);
    expect(entry?.version).toBeGreaterThan(0);
    expect(await getJson(store, 'nothing')).toBeUndefined();
    await store.set('not-json', bytes('{oops'));
    await expect(getJson(store, 'not-json')).rejects.toBeInstanceOf(KvInvalidArgument);
  });

  it('orders keys by their UTF-8 bytes, with NUL, accents and astral characters', async () => {
    const keys = ['b', 'a', 'ab', 'a\u0000', '\u{E000}', '\u{1F600}', 'é', 'Z', 'a b'];
    await setMany(store, keys);
    const expected = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect((await store.scan('')).keys).toEqual(expected);
    expect((await scanAll(store, '', 2)).keys).toEqual(expected);
    expect((await store.get('a\u0000'))?.value).toEqual(bytes('v'));
  });

  it('scans more than 1,000 keys in pages of at most 1,000, each key once', async () => {
    const keys = Array.from({ length: 2_345 }, (_, i) => `p:${String(i).padStart(5, '0')}`);
    await setMany(store, [...keys, 'o:before', 'q:after', 'p', 'p;']);
    const { keys: found, pages } = await scanAll(store, 'p:');
    expect(pages).toEqual([1_000, 1_000, 345]);
    expect(found).toEqual(keys);
    const small = await scanAll(store, 'p:000', 7);
    expect(small.keys).toEqual(keys.slice(0, 100));
    expect(Math.max(...small.pages)).toBe(7);
    // A page that ends exactly at the last key has no `next`.
    expect((await store.scan('p:0000', { limit: 10 })).next).toBeUndefined();
  });

  it('takes the prefix literally: % _ and \\ are not wildcards', async () => {
    await setMany(store, ['a%b', 'a%bc', 'axb', 'a_c', 'abc', 'a\\x', 'a\\', "a'"]);
    expect((await store.scan('a%')).keys).toEqual(['a%b', 'a%bc']);
    expect((await store.scan('a_')).keys).toEqual(['a_c']);
    expect((await store.scan('a\\')).keys).toEqual(['a\\', 'a\\x']);
    expect((await store.scan("a'")).keys).toEqual(["a'"]);
    expect((await store.scan('%')).keys).toEqual([]);
  });

  it('a cursor outside the prefix starts at the prefix, or past it ends the scan', async () => {
    await setMany(store, ['m1', 'm2', 'n1']);
    expect((await store.scan('m', { cursor: 'a' })).keys).toEqual(['m1', 'm2']);
    expect((await store.scan('m', { cursor: 'm1' })).keys).toEqual(['m2']);
    expect((await store.scan('m', { cursor: 'z' })).keys).toEqual([]);
  });

  it('expires keys by the injected clock on every backend', async () => {
    await store.set('short', bytes('s'), { ttlMs: 1_000 });
    await store.set('long', bytes('l'), { ttlMs: 60_000 });
    await store.set('forever', bytes('f'));
    clock.advance(999);
    expect(text(await store.get('short'))).toBe('s');
    clock.advance(1);
    expect(await store.get('short')).toBeUndefined();
    expect(await store.exists('short')).toBe(false);
    expect(await store.delete('short')).toBe(false);
    expect((await store.scan('')).keys).toEqual(['forever', 'long']);
    clock.advance(59_000);
    expect((await store.scan('')).keys).toEqual(['forever']);
    clock.advance(KV_LIMITS.maxTtlMs);
    expect(text(await store.get('forever'))).toBe('f');
  });

  it('a write replaces the TTL: set without one makes the key permanent again', async () => {
    await store.set('k', bytes('1'), { ttlMs: 100 });
    await store.set('k', bytes('2'));
    clock.advance(1_000);
    expect(text(await store.get('k'))).toBe('2');
    await store.set('k', bytes('3'), { ttlMs: 100 });
    clock.advance(100);
    expect(await store.get('k')).toBeUndefined();
  });

  it('versions keep growing across delete, expiry and re-creation', async () => {
    const seen: number[] = [];
    seen.push(await store.set('k', bytes('a')));
    seen.push(await store.set('other', bytes('x')));
    seen.push(await store.set('k', bytes('b')));
    await store.delete('k');
    seen.push(await store.set('k', bytes('c'), { ttlMs: 10 }));
    clock.advance(10);
    const retaken = await store.setIfVersion('k', bytes('d'), null);
    expect(retaken.ok).toBe(true);
    seen.push(retaken.version!);
    await store.deleteIfVersion('k', retaken.version!);
    const created = await store.setIfVersion('k', bytes('e'), null);
    seen.push(created.version!);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]!);
    expect((await store.get('k'))!.version).toBe(seen.at(-1));
  });

  it('compare-and-set: succeeds on the current version, conflicts otherwise and reports the current one', async () => {
    expect(await store.setIfVersion('k', bytes('a'), 5)).toEqual({ ok: false, version: null });
    const created = await store.setIfVersion('k', bytes('a'), null);
    expect(created.ok).toBe(true);
    expect(await store.setIfVersion('k', bytes('b'), null)).toEqual({ ok: false, version: created.version });
    expect(await store.setIfVersion('k', bytes('b'), created.version! + 1)).toEqual({ ok: false, version: created.version });
    const updated = await store.setIfVersion('k', bytes('b'), created.version!, { ttlMs: 500 });
    expect(updated.ok).toBe(true);
    expect(updated.version).toBeGreaterThan(created.version!);
    expect(text(await store.get('k'))).toBe('b');
    // The old version no longer fences anything.
    expect((await store.setIfVersion('k', bytes('c'), created.version!)).ok).toBe(false);
    expect(await store.deleteIfVersion('k', created.version!)).toEqual({ ok: false, version: updated.version });
    clock.advance(500);
    // Expired: a CAS on the old version fails, one expecting absence succeeds.
    expect(await store.setIfVersion('k', bytes('c'), updated.version!)).toEqual({ ok: false, version: null });
    expect(await store.deleteIfVersion('k', updated.version!)).toEqual({ ok: false, version: null });
    const retaken = await store.setIfVersion('k', bytes('c'), null);
    expect(retaken.ok).toBe(true);
    expect(await store.deleteIfVersion('k', retaken.version!)).toEqual({ ok: true, version: retaken.version });
    expect(await store.exists('k')).toBe(false);
  });

  it('exactly one of many concurrent compare-and-sets wins, and concurrent writes get distinct growing versions', async () => {
    const takes = await Promise.all(Array.from({ length: 25 }, (_, i) => store.setIfVersion('lease', bytes(`owner-${i}`), null, { ttlMs: 10_000 })));
    const winners = takes.filter((take) => take.ok);
    expect(winners).toHaveLength(1);
    for (const take of takes.filter((candidate) => !candidate.ok)) expect(take.version).toBe(winners[0]!.version);

    const renewals = await Promise.all(Array.from({ length: 25 }, () => store.setIfVersion('lease', bytes('renewed'), winners[0]!.version, { ttlMs: 10_000 })));
    expect(renewals.filter((renewal) => renewal.ok)).toHaveLength(1);

    const versions = await Promise.all(Array.from({ length: 50 }, (_, i) => store.set('hot', bytes(String(i)))));
    expect(new Set(versions).size).toBe(50);
    const last = await store.get('hot');
    expect(last!.version).toBe(Math.max(...versions));
  });

  it('refuses what breaks a cap with a typed error naming it', async () => {
    const capOf = async (work: Promise<unknown>): Promise<string> => {
      const error = await work.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(KvCapExceeded);
      return (error as KvCapExceeded).cap;
    };
    expect(await capOf(store.set('x'.repeat(513), bytes('v')))).toBe('kv.maxKeyBytes');
    expect(await capOf(store.get('é'.repeat(257)))).toBe('kv.maxKeyBytes');
    await store.set('é'.repeat(256), bytes('v')); // 512 bytes: fits
    expect(await capOf(store.set('big', Buffer.alloc(KV_LIMITS.maxValueBytes + 1)))).toBe('kv.maxValueBytes');
    expect(await capOf(store.set('k', bytes('v'), { ttlMs: KV_LIMITS.maxTtlMs + 1 }))).toBe('kv.maxTtlMs');
    expect(await capOf(store.scan('', { limit: 1_001 }))).toBe('kv.maxScanLimit');
    await expect(store.set('', bytes('v'))).rejects.toBeInstanceOf(KvInvalidArgument);
    await expect(store.set('lone\uD800', bytes('v'))).rejects.toBeInstanceOf(KvInvalidArgument);
    await expect(store.set('k', 'text' as unknown as Buffer)).rejects.toBeInstanceOf(KvInvalidArgument);
    await expect(store.set('k', bytes('v'), { ttlMs: 0 })).rejects.toBeInstanceOf(KvInvalidArgument);
    await expect(store.set('k', bytes('v'), { ttlMs: 1.5 })).rejects.toBeInstanceOf(KvInvalidArgument);
    await expect(store.setIfVersion('k', bytes('v'), 0)).rejects.toBeInstanceOf(KvInvalidArgument);
    await expect(store.scan('', { cursor: '' })).rejects.toBeInstanceOf(KvInvalidArgument);
    expect(await store.exists('k')).toBe(false);
  });

  it('stores values up to 16 MiB, and large values survive overwrite, CAS and delete', { timeout: 30_000 }, async () => {
    const max = Buffer.alloc(KV_LIMITS.maxValueBytes);
    for (let i = 0; i < max.length; i += 4_096) max[i] = (i / 4_096) & 0xff;
    const version = await store.set('max', max);
    const read = await store.get('max');
    expect(read!.version).toBe(version);
    expect(read!.value.equals(max)).toBe(true);

    const middle = Buffer.alloc(700_001, 3);
    const swapped = await store.setIfVersion('max', middle, version);
    expect(swapped.ok).toBe(true);
    expect((await store.get('max'))!.value.equals(middle)).toBe(true);
    await store.set('max', bytes('small'));
    expect(text(await store.get('max'))).toBe('small');
    await store.set('max', middle, { ttlMs: 5 });
    expect(await store.delete('max')).toBe(true);
    expect(await store.get('max')).toBeUndefined();
    if (backend.name === 'sqlite') {
      // Pieces of overwritten and deleted values are gone with them.
      expect(Number((await backend.db!.query(`SELECT count(*) AS n FROM ${(store as { table?: string }).table}_chunk`)).rows[0]!.n)).toBe(0);
    }
  });

  it('sweeps expired keys in the background, in bounded batches, leaving live ones', async () => {
    await opened.close();
    opened = await backend.open(clock, { sweepBatch: 7, sweepIntervalMs: 100 });
    store = opened.store;
    const expiring = Array.from({ length: 40 }, (_, i) => `e${i}`);
    for (let i = 0; i < expiring.length; i += 10) await Promise.all(expiring.slice(i, i + 10).map((key) => store.set(key, bytes('x'), { ttlMs: 1_000 })));
    await setMany(store, ['live1', 'live2', 'live3']);
    await store.set('later', bytes('x'), { ttlMs: 100_000 });
    expect(await opened.count()).toBe(44);
    clock.advance(999);
    expect(await store.sweepExpired()).toBe(0);
    // The background sweep runs on the clock's timers: keep time moving until it has removed them.
    await eventuallyAsync(async () => {
      clock.advance(100);
      return (await opened.count()) === 4;
    }, 10_000, 'the sweep to remove expired rows');
    expect((await store.scan('')).keys).toEqual(['later', 'live1', 'live2', 'live3']);
  });

  it('sweepExpired removes at most one batch per call', async () => {
    await opened.close();
    opened = await backend.open(clock, { sweepBatch: 10, sweepIntervalMs: 3_600_000 });
    store = opened.store;
    for (let i = 0; i < 25; i += 5) await Promise.all([0, 1, 2, 3, 4].map((j) => store.set(`k${i + j}`, bytes('x'), { ttlMs: 1 })));
    await store.set('kept', bytes('x'));
    // Past the expiry but short of the next sweep tick: only explicit sweeps run.
    clock.advance(1);
    expect(await store.sweepExpired()).toBe(10);
    expect(await store.sweepExpired()).toBe(10);
    expect(await store.sweepExpired()).toBe(5);
    expect(await store.sweepExpired()).toBe(0);
    expect(await opened.count()).toBe(1);
  });
});
