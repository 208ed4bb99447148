/**
 * The oplog written in the ORM's own write transaction, on both backends: every committed write of a
 * replicated model (insert, insertMany with and without returning, upsert, update, delete, bulk
 * update and delete) has its entry, in S7-7's shape, sequence gap-free; a rolled-back one has none;
 * models that do not declare `replicated` append nothing; retention is bounded and a reader behind
 * it gets OplogBehindRetention; the sequence and clock survive a reopen.
 */
import { describe, expect, it } from 'vitest';
import { OplogBehindRetention, type Database } from '../../../src/index.js';
import { defineModel, eq, field, Orm } from '../../../src/data/orm/index.js';
import { Oplog } from '../../../src/data/replication/oplog.js';
import { BACKENDS, openForEachTest } from '../backends.js';

const Note = defineModel(
  'notes',
  { id: field.int64().primaryKey(), body: field.text(), version: field.int64() },
  { version: 'version', replicated: { policy: 'optimistic' } },
);
const Plain = defineModel('plain', { id: field.int64().primaryKey(), body: field.text() });

describe.each(BACKENDS)('oplog in the ORM transaction on $name', (backend) => {
  let db: Database;
  let orm: Orm;
  let oplog: Oplog;
  let t = 1_700_000_000_000;

  openForEachTest(backend, async (opened) => {
    db = opened.db;
    oplog = await Oplog.open(db, { instance: 'node-a', now: () => t });
    orm = new Orm(db, { oplog });
    await orm.createTables(Note, Plain);
  });

  const all = async () => {
    const out = [];
    let after = 0;
    for (;;) {
      const batch = await oplog.read(after);
      if (batch.length === 0) return out;
      out.push(...batch);
      after = batch[batch.length - 1]!.seq;
    }
  };

  it('every committed write path appends its entries; sequence gap-free, timestamps increasing', async () => {
    let woke = 0;
    oplog.onAppend(() => woke++);
    const n1 = await orm.insert(Note, { id: 1n, body: 'one' });
    await orm.insertMany(Note, [{ id: 2n, body: 'two' }, { id: 3n, body: 'three' }]);
    expect(await orm.insertMany(Note, [{ id: 4n, body: 'four' }], { returning: false })).toBe(1);
    await orm.upsert(Note, { id: 5n, body: 'five' });
    await orm.upsert(Note, { id: 5n, body: 'five!' });
    const u1 = await orm.update(Note, n1, { body: 'uno' });
    await orm.delete(Note, u1);
    await orm.query(Note).where(eq(Note.c.id, 2n)).update({ body: 'dos' });
    await orm.query(Note).where(eq(Note.c.id, 3n)).delete();
    await orm.insert(Plain, { id: 1n, body: 'not replicated' });
    const entries = await all();
    expect(entries.map((e) => [e.seq, e.key, e.op, e.version])).toEqual([
      [1, '1', 'upsert', 1],
      [2, '2', 'upsert', 1],
      [3, '3', 'upsert', 1],
      [4, '4', 'upsert', 1],
      [5, '5', 'upsert', 1],
      [6, '5', 'upsert', 2],
      [7, '1', 'upsert', 2],
      [8, '1', 'delete', 2],
      [9, '2', 'upsert', 2],
      [10, '3', 'delete', 1],
    ]);
    for (const e of entries) {
      expect(e.instance).toBe('node-a');
      expect(e.model).toBe('notes');
    }
    expect(entries[6]!.data).toEqual({ id: 1n, body: 'uno', version: 2n });
    expect(entries[7]!.data).toEqual({ id: 1n });
    const stamps = entries.map((e) => e.ts);
    expect([...stamps].sort()).toEqual(stamps);
    expect(new Set(stamps).size).toBe(stamps.length);
    expect(await oplog.highWater()).toBe(10);
    expect(woke).toBe(9);
  });

  it('a rolled-back transaction leaves no entry and no gap; a committed one keeps all of its own', async () => {
    await expect(
      orm.transaction(async (tx) => {
        await tx.insert(Note, { id: 1n, body: 'lost' });
        await tx.insert(Note, { id: 2n, body: 'lost' });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await orm.transaction(async (tx) => {
      await tx.insert(Note, { id: 3n, body: 'kept' });
      // A failed savepoint takes its entries with it; the outer transaction keeps the rest.
      await expect(
        tx.transaction(async (inner) => {
          await inner.insert(Note, { id: 4n, body: 'lost' });
          throw new Error('inner');
        }),
      ).rejects.toThrow('inner');
      await tx.insert(Note, { id: 5n, body: 'kept' });
    });
    // A statement that fails on its own (duplicate key) rolls its implicit transaction back.
    await expect(orm.insert(Note, { id: 3n, body: 'dup' })).rejects.toThrow();
    const entries = await all();
    expect(entries.map((e) => [e.seq, e.key])).toEqual([
      [1, '3'],
      [2, '5'],
    ]);
  });

  it('bounded retention: a reader behind it gets OplogBehindRetention; sequence and clock survive a reopen', async () => {
    const small = await Oplog.open(db, { instance: 'node-b', now: () => t, maxEntries: 3, pruneEvery: 1_000_000 });
    const o = new Orm(db, { oplog: small });
    for (let i = 1; i <= 6; i++) await o.insert(Note, { id: BigInt(i), body: `n${i}` });
    expect(await small.prune()).toBe(3);
    await expect(small.read(2)).rejects.toBeInstanceOf(OplogBehindRetention);
    await expect(small.read(2)).rejects.toMatchObject({ code: 'REPLICATION_BEHIND_RETENTION', oldestSeq: 4 });
    expect((await small.read(3)).map((e) => e.seq)).toEqual([4, 5, 6]);
    const last = small.clock.last;
    t -= 60_000; // the clock stepped back before the restart
    const reopened = await Oplog.open(db, { instance: 'node-b', now: () => t, maxEntries: 3 });
    await new Orm(db, { oplog: reopened }).insert(Note, { id: 7n, body: 'after restart' });
    const [entry] = await reopened.read(6);
    expect(entry!.seq).toBe(7);
    expect(entry!.ts > last).toBe(true);
    t += 60_000;
  });

  it('read respects the entry and byte caps, always at least one entry', async () => {
    for (let i = 1; i <= 12; i++) await orm.insert(Note, { id: BigInt(i), body: 'x'.repeat(1_000) });
    expect((await oplog.read(0, { maxEntries: 5 })).length).toBe(5);
    expect((await oplog.read(0, { maxBytes: 2_500 })).length).toBe(2);
    expect((await oplog.read(0, { maxBytes: 10 })).length).toBe(1);
    expect((await oplog.read(0, { maxEntries: 10_000 })).length).toBe(12);
  });
});
