/**
 * Commit, rollback and savepoints with identical assertions on both backends (validation steps 1-4
 * of 04-data.md).
 */
import { describe, expect, it } from 'vitest';
import { TransactionStateError, type Database, type Transaction } from '../../src/data/index.js';
import { BACKENDS, openForEachTest } from './backends.js';

describe.each(BACKENDS)('transactions on $name', (backend) => {
  let db: Database;
  openForEachTest(backend, async (opened) => {
    db = opened.db;
    await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)');
  });

  const labels = async (): Promise<string[]> =>
    (await db.query<{ label: string }>('SELECT label FROM items ORDER BY id')).rows.map((row) => row.label);

  it('commits when the function resolves, and returns its value', async () => {
    const value = await db.transaction(async (tx) => {
      await tx.query('INSERT INTO items (id, label) VALUES ($1, $2)', [1, 'a']);
      await tx.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [2, 'b']);
      return 'done';
    });
    expect(value).toBe('done');
    expect(await labels()).toEqual(['a', 'b']);
  });

  it('rolls back when the function rejects, and rethrows the same error', async () => {
    const failure = new Error('changed my mind');
    await expect(
      db.transaction(async (tx) => {
        await tx.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [1, 'a']);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await labels()).toEqual([]);
  });

  it('a failed nested scope rolls back to its savepoint and the outer one commits', async () => {
    await db.transaction(async (tx) => {
      await tx.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [1, 'outer']);
      await expect(
        tx.transaction(async (inner) => {
          expect(inner.depth).toBe(2);
          await inner.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [2, 'inner']);
          throw new Error('inner fails');
        }),
      ).rejects.toThrow('inner fails');
      await tx.transaction(async (inner) => {
        await inner.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [3, 'kept']);
      });
    });
    expect(await labels()).toEqual(['outer', 'kept']);
  });

  it('savepoints are named molo_sp_<depth>_<counter>, unique within the transaction', async () => {
    await db.transaction(async (tx) => {
      await tx.transaction(async () => undefined); // molo_sp_2_0
      await tx.transaction(async (inner) => {
        // The second savepoint of this transaction, at depth 2.
        await inner.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [1, 'undone']);
        await inner.query('ROLLBACK TO SAVEPOINT molo_sp_2_1');
        await inner.transaction(async (deepest) => {
          expect(deepest.depth).toBe(3);
          await deepest.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [2, 'deep']);
          await deepest.query('ROLLBACK TO SAVEPOINT molo_sp_3_2');
        });
      });
      await tx.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [3, 'last']);
    });
    expect(await labels()).toEqual(['last']);
  });

  it('nests three deep: an error at depth 3 undoes only depth 3', async () => {
    await db.transaction(async (tx) => {
      await tx.transaction(async (second) => {
        await second.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [1, 'second']);
        await second
          .transaction(async (third) => {
            await third.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [2, 'third']);
            throw new Error('third fails');
          })
          .catch(() => undefined);
      });
    });
    expect(await labels()).toEqual(['second']);
  });

  it('a transaction object used after it ended is refused', async () => {
    let escaped: Transaction | undefined;
    await db.transaction(async (tx) => {
      escaped = tx;
    });
    expect(() => escaped!.query('SELECT 1')).toThrow(TransactionStateError);
  });

  it('statements inside a transaction see its own uncommitted writes; others do not until commit', async () => {
    await db.transaction(async (tx) => {
      await tx.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [1, 'pending']);
      expect((await tx.query('SELECT count(*) AS n FROM items')).rows[0]!.n).toEqual(backend.name === 'postgres' ? 1n : 1);
      expect(await labels()).toEqual([]);
    });
    expect(await labels()).toEqual(['pending']);
  });

  it('many statements issued at once inside one transaction all land, in order', async () => {
    await db.transaction(async (tx) => {
      await Promise.all(
        Array.from({ length: 500 }, (_, i) => tx.query(sql(backend.name, 'INSERT INTO items (id, label) VALUES ($1, $2)'), [i, `row ${i}`])),
      );
    });
    const rows = await labels();
    expect(rows).toHaveLength(500);
    expect(rows[499]).toBe('row 499');
  });
});

/** Both backends accept `$1`-style numbered parameters? SQLite takes `?NNN`; `$1` is a named parameter there. */
function placeholder(name: 'postgres' | 'sqlite'): (match: string, n: string) => string {
  return (_match, n) => (name === 'postgres' ? `$${n}` : `?${n}`);
}

function sql(name: 'postgres' | 'sqlite', text: string): string {
  return text.replace(/\$(\d+)/g, placeholder(name));
}
