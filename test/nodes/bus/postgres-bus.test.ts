/**
 * The Postgres bus on a real server, two buses (two pools) as two instances: sequences, catch-up
 * reads with a typed gap past retention, subscriptions woken across instances by NOTIFY, and the
 * stream store's range read on SQLite too (the same SQL).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStreams } from '../../../src/bus/index.js';
import { createPostgresPool, type PostgresDatabase } from '../../../src/data/index.js';
import { postgresBus, type BusItem, type PostgresBus } from '../../../src/nodes/index.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { testSystem } from '../../support/systems.js';

let fresh: FreshDatabase;
beforeAll(() => {
  fresh = freshDatabase('bus');
});
afterAll(() => fresh.drop());

async function open(options: Parameters<typeof postgresBus>[1] = {}): Promise<{ bus: PostgresBus; db: PostgresDatabase; close(): Promise<void> }> {
  const system = testSystem();
  const db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 1, max: 2 });
  const bus = await postgresBus(db, { retentionIntervalMs: 0, pollIntervalMs: 60_000, ...options });
  return { bus, db, close: async () => (await bus.close(), await db.close()) };
}

describe('the Postgres bus', () => {
  it('publishes gapless sequences; another instance’s subscription is woken by NOTIFY, in order, once each', async () => {
    const [one, two] = [await open(), await open()];
    try {
      const got: BusItem[] = [];
      // Poll interval 60 s: only the notification can wake it in time.
      const sub = two.bus.subscribe('t.a', 1, (item) => got.push(item));
      const seqs: number[] = [];
      for (let i = 0; i < 30; i++) seqs.push(await one.bus.publish('t.a', { i }));
      expect(seqs).toEqual([...Array(30).keys()].map((i) => i + 1));
      const deadline = Date.now() + 5_000;
      while (got.length < 30 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(got.map((item) => (item.kind === 'message' ? (item.payload as { i: number }).i : -1))).toEqual([...Array(30).keys()]);
      expect(sub.nextSeq).toBe(31);
      sub.unsubscribe();
      expect(await two.bus.lastSeq('t.a')).toBe(30);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('a read below retention answers a typed gap, then the retained messages; a subscription from there reports it in-band', async () => {
    const one = await open({ table: 'molo_bus_small', retention: { maxMsgs: 3 } });
    try {
      for (let i = 0; i < 10; i++) await one.bus.publish('t.b', i);
      expect(await one.bus.enforceRetention()).toBe(7);
      const read = await one.bus.read('t.b', 2);
      expect(read.gap).toEqual({ topic: 't.b', from: 2, to: 7 });
      expect(read.messages.map((m) => m.seq)).toEqual([8, 9, 10]);
      expect((await one.bus.read('t.b', 11)).gap).toBeUndefined();
      const items: BusItem[] = [];
      const sub = one.bus.subscribe('t.b', 1, (item) => items.push(item));
      const deadline = Date.now() + 5_000;
      while (items.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(items[0]).toEqual({ kind: 'gap', topic: 't.b', from: 1, to: 7 });
      expect(items.slice(1).map((item) => item.kind === 'message' && item.payload)).toEqual([7, 8, 9]);
      sub.unsubscribe();
      await expect(one.bus.read('t.b', 0)).rejects.toMatchObject({ code: 'NODE_BUS_INVALID_ARGUMENT' });
      await expect(one.bus.read('bad topic', 1)).rejects.toMatchObject({ code: 'NODE_BUS_INVALID_ARGUMENT' });
    } finally {
      await one.close();
    }
    await expect(one.bus.publish('t.b', 1)).rejects.toMatchObject({ code: 'NODE_BUS_CLOSED' });
  });

  it('refuses an unknown option naming the nearest', async () => {
    const system = testSystem();
    const db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 1, max: 1 });
    try {
      await expect(postgresBus(db, { pollInterval: 5 } as never)).rejects.toThrow(/did you mean pollIntervalMs\?/);
    } finally {
      await db.close();
    }
  });

  it('the stream store reads a range on SQLite as on Postgres', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'molo-read-'));
    const system = testSystem();
    const streams = await openSqliteStreams(system, { file: join(dir, 's.db'), readers: 0 });
    try {
      await streams.createStream('s', { maxMsgs: 2 });
      for (let i = 0; i < 5; i++) await streams.publish('s', i);
      await streams.enforceRetention('s');
      const range = await streams.read('s', 1, { limit: 10 });
      expect(range.lastSeq).toBe(5);
      expect(range.messages.map((m) => [m.seq, m.value()])).toEqual([[4, 3], [5, 4]]);
      await expect(streams.read('s', 1, { limit: 5_000 })).rejects.toMatchObject({ code: 'STREAM_CAP_EXCEEDED' });
    } finally {
      await streams.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
