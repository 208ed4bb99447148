/**
 * The key cap of the SQL KV stores (04 Specs: 1,048,576 keys per store, LRU eviction beyond; issue 26
 * item 4): `maxKeys` is enforced, the least recently used keys go first, evictions are counted, a cap
 * above the seed's is refused by name, and a table made before the cap existed keeps working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import { InvalidDataConfig } from '../../../src/data/index.js';
import { KV_LIMITS, openKv, type SqlKvStore } from '../../../src/data/kv/index.js';
import { KV_BACKENDS } from './stores.js';

const bytes = (text: string): Buffer => Buffer.from(text);
const SQL_BACKENDS = KV_BACKENDS.filter((backend) => backend.name !== 'memory');
let tables = 0;

describe.each(SQL_BACKENDS)('KV key cap on $name', (backend) => {
  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown(), 30_000);

  const table = (): string => `kv_cap${process.pid}_${++tables}`;
  const count = async (name: string): Promise<number> => Number((await backend.db!.query(`SELECT count(*) AS n FROM ${name}`)).rows[0]!.n);

  it('holds at most maxKeys keys, evicting the least recently used, and counts evictions', async () => {
    const clock = new SimulatedClock();
    const name = table();
    const store = await openKv(backend.db!, { clock, table: name, maxKeys: 10, sweepIntervalMs: 3_600_000 });
    try {
      const setRange = async (from: number, to: number): Promise<void> => {
        for (let i = from; i < to; i++) {
          await store.set(`k${i}`, bytes(`v${i}`));
          clock.advance(1);
        }
      };
      await setRange(0, 15); // k0..k4 go, oldest first
      // Read k5 and k6: now more recently used than k7..k14.
      expect((await store.get('k5'))?.value).toEqual(bytes('v5'));
      clock.advance(1);
      expect((await store.get('k6'))?.value).toEqual(bytes('v6'));
      clock.advance(1);
      await setRange(15, 20); // k7..k11 go
      const rows = await count(name);
      const stats = (store as Partial<Pick<SqlKvStore, 'stats'>>).stats?.();
      console.log(`[probe] ${backend.name}: 20 keys set with maxKeys 10 -> ${rows} rows, evictions ${stats?.evictions ?? 'n/a'}`);
      expect(rows).toBe(10);
      expect(stats?.evictions).toBe(10);
      const live = (await store.scan('k')).keys.sort();
      expect(live).toEqual(['k12', 'k13', 'k14', 'k15', 'k16', 'k17', 'k18', 'k19', 'k5', 'k6']);
    } finally {
      await store.close();
    }
  });

  it('evicts expired keys before live ones, and counts only live ones as evictions', async () => {
    const clock = new SimulatedClock();
    const name = table();
    const store = await openKv(backend.db!, { clock, table: name, maxKeys: 5, sweepIntervalMs: 3_600_000 });
    try {
      await store.set('short', bytes('x'), { ttlMs: 5 });
      for (let i = 0; i < 4; i++) await store.set(`live${i}`, bytes('x'));
      clock.advance(10);
      await store.set('live4', bytes('x'));
      expect(await count(name)).toBe(5);
      expect((await store.scan('live')).keys).toHaveLength(5);
      expect(store.stats().evictions).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('refuses maxKeys above the seed cap (1,048,576), naming it, and refuses unknown option keys', async () => {
    await expect(openKv(backend.db!, { table: table(), maxKeys: KV_LIMITS.maxKeys + 1 })).rejects.toThrow(InvalidDataConfig);
    await expect(openKv(backend.db!, { table: table(), maxKeys: KV_LIMITS.maxKeys + 1 })).rejects.toThrow(/kv\.maxKeys.*1048576/);
    await expect(openKv(backend.db!, { table: table(), maxkeys: 10 } as never)).rejects.toThrow(/kv\.maxkeys: unknown option; did you mean maxKeys\?/);
    const store = await openKv(backend.db!, { table: table(), maxKeys: KV_LIMITS.maxKeys });
    await store.close();
  });

  it('a table made before the cap existed keeps its rows and gets the cap (the migration is idempotent)', async () => {
    const db = backend.db!;
    const name = table();
    if (db.backend === 'postgres') {
      await db.query(`CREATE SEQUENCE ${name}_version_seq`);
      await db.query(`CREATE TABLE ${name} (key bytea PRIMARY KEY, value bytea NOT NULL, version int8 NOT NULL, expires_at int8)`);
      await db.query(`INSERT INTO ${name} VALUES ('\\x6f6c64'::bytea, '\\x31'::bytea, nextval('${name}_version_seq'), NULL)`);
    } else {
      await db.query(`CREATE TABLE ${name} (key BLOB PRIMARY KEY, value BLOB NOT NULL, version INTEGER NOT NULL, expires_at INTEGER, chunks INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID`);
      await db.query(`CREATE TABLE ${name}_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID`);
      await db.query(`INSERT INTO ${name}_meta (name, value) VALUES ('version', 1)`);
      await db.query(`INSERT INTO ${name} (key, value, version, expires_at, chunks) VALUES (X'6f6c64', X'31', 1, NULL, 0)`);
    }
    const clock = new SimulatedClock();
    const [first, second] = await Promise.all([
      openKv(db, { clock, table: name, maxKeys: 3, sweepIntervalMs: 3_600_000 }),
      openKv(db, { clock, table: name, maxKeys: 3, sweepIntervalMs: 3_600_000 }),
    ]);
    try {
      expect((await first.get('old'))?.value).toEqual(bytes('1'));
      clock.advance(1);
      for (const key of ['a', 'b', 'c']) {
        await second.set(key, bytes(key));
        clock.advance(1);
      }
      await first.set('d', bytes('d'));
      expect(await count(name)).toBeLessThanOrEqual(3);
      // `old` got accessed_at 0 from the migration (first's read of it was not flushed yet when second evicted): it went first.
      expect(await first.exists('old')).toBe(false);
      expect(await first.exists('d')).toBe(true);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
