/**
 * A write on `db` itself from inside `db.transaction`'s callback (instead of on `tx`) behaves the
 * same on both backends: refused at once with OutsideTransaction. Before, Postgres committed it
 * on its own connection whatever the transaction then did, and SQLite waited for the writer its
 * own transaction held until AcquireTimeout. Reads on `db` still work (they see only committed
 * rows), the refusal ends with the callback, and `outsideTransaction` says a write is meant to be
 * independent.
 */
import { describe, expect, it } from 'vitest';
import { OutsideTransaction, outsideTransaction, type Database } from '../../src/data/index.js';
import type { ActorSystem } from '../../src/actors/index.js';
import { BACKENDS, openForEachTest } from './backends.js';

describe.each(BACKENDS)('a plain db write inside db.transaction on $name', (backend) => {
  let db: Database;
  let system: ActorSystem;
  openForEachTest(
    backend,
    async (opened, opener) => {
      db = opened.db;
      system = opener;
      await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)');
    },
    { sqlite: { acquireTimeoutMs: 5_000 } },
  );

  const labels = async (): Promise<string[]> => (await db.query<{ label: string }>('SELECT label FROM items ORDER BY id')).rows.map((row) => row.label);

  it('is refused at once with OutsideTransaction, and the transaction goes on', async () => {
    const started = Date.now();
    let refused: unknown;
    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO items VALUES (1, 'in tx')");
      refused = await db.query("INSERT INTO items VALUES (2, 'on db')").catch((error: unknown) => error);
      await tx.query("INSERT INTO items VALUES (3, 'in tx again')");
    });
    expect(refused).toBeInstanceOf(OutsideTransaction);
    expect((refused as OutsideTransaction).code).toBe('DB_OUTSIDE_TRANSACTION');
    expect((refused as Error).message).toContain('use the callback');
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(await labels()).toEqual(['in tx', 'in tx again']);
  });

  it('a rolled-back transaction leaves nothing behind, not even the refused write', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO items VALUES (1, 'in tx')");
        await db.query("INSERT INTO items VALUES (2, 'on db')");
      }),
    ).rejects.toBeInstanceOf(OutsideTransaction);
    expect(await labels()).toEqual([]);
  });

  it('a write transaction on db inside the callback is refused too; reads on db see committed rows', async () => {
    await db.query("INSERT INTO items VALUES (1, 'committed')");
    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO items VALUES (2, 'pending')");
      await expect(db.transaction(async () => undefined)).rejects.toBeInstanceOf(OutsideTransaction);
      expect(await labels()).toEqual(['committed']);
    });
    expect(await labels()).toEqual(['committed', 'pending']);
  });

  it('is still refused in a transaction that outlives another one, and again in the next transaction', async () => {
    // The scope storage is switched off when the last live callback settles: one settling must not
    // switch it off under another that is still running.
    let releaseOuter!: () => void;
    const outerMayFinish = new Promise<void>((resolve) => (releaseOuter = resolve));
    let refused: unknown;
    const outer = db.transaction(async (tx) => {
      await tx.query("INSERT INTO items VALUES (1, 'outer')");
      await outerMayFinish;
      refused = await db.query("INSERT INTO items VALUES (2, 'on db')").catch((error: unknown) => error);
    });
    // A short transaction of another database settles while the first still runs.
    const other = await BACKENDS.find((b) => b.name === 'sqlite')!.open(system);
    try {
      await other.db.transaction(async (tx) => void (await tx.query('CREATE TABLE t (x INTEGER)')));
    } finally {
      await other.dispose();
    }
    releaseOuter();
    await outer;
    expect(refused).toBeInstanceOf(OutsideTransaction);
    await expect(db.transaction(async () => void (await db.query("INSERT INTO items VALUES (3, 'on db')")))).rejects.toBeInstanceOf(OutsideTransaction);
    expect(await labels()).toEqual(['outer']);
  });

  it('ends with the callback, and outsideTransaction() marks an independent write', async () => {
    let later: Promise<unknown> | undefined;
    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO items VALUES (1, 'in tx')");
      // Left behind by the callback, runs after the commit: not refused.
      later = new Promise((resolve) => setTimeout(resolve, 20)).then(() => db.query("INSERT INTO items VALUES (2, 'after')"));
    });
    await later;
    expect(await labels()).toEqual(['in tx', 'after']);
    if (backend.name === 'postgres') {
      // Meant to be independent of the transaction (an audit row that survives its rollback).
      await expect(
        db.transaction(async () => {
          await outsideTransaction(() => db.query("INSERT INTO items VALUES (3, 'audit')"));
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await labels()).toEqual(['in tx', 'after', 'audit']);
    }
  });
});
