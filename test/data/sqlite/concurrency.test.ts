/**
 * One writer, N readers: WAL snapshots, transactions and savepoints through the single-writer gate,
 * the gate's caps, and the per-thread request queue's cap.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { AcquireTimeout, OutcomeUnknown, PoolExhausted, QueueFull, StatementTimeout, type Transaction } from '../../../src/data/index.js';
import { testSystem } from '../../support/systems.js';
import { openTemp, type TempDatabase } from './support.js';

let system: ActorSystem;
let temp: TempDatabase | undefined;

beforeEach(() => {
  system = testSystem();
});

afterEach(async () => {
  await temp?.dispose();
  temp = undefined;
});

async function open(config: Parameters<typeof openTemp>[1] = {}): Promise<TempDatabase> {
  temp = await openTemp(system, config);
  await temp.db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)');
  return temp;
}

/** A promise and its resolver, to hold a transaction open for as long as a test wants. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const count = async (db: TempDatabase['db']): Promise<number> => (await db.query<{ n: number }>('SELECT count(*) AS n FROM items')).rows[0]!.n;

describe('WAL: readers beside the writer', () => {
  it('reads run on readers while a write transaction is open, and see the last commit', async () => {
    const { db } = await open();
    await db.query('INSERT INTO items (label) VALUES (?)', ['committed']);
    const held = gate();
    const inside = gate();
    const tx = db.transaction(async (t) => {
      await t.query('INSERT INTO items (label) VALUES (?)', ['pending']);
      expect((await t.query<{ n: number }>('SELECT count(*) AS n FROM items')).rows[0]!.n).toBe(2);
      inside.open();
      await held.promise;
    });
    await inside.promise;
    // The writer is held by the transaction; these go to readers and do not wait for it.
    const reads = await Promise.all(Array.from({ length: 20 }, () => count(db)));
    expect(reads).toEqual(Array.from({ length: 20 }, () => 1));
    held.open();
    await tx;
    expect(await count(db)).toBe(2);
  });

  it('a read-only transaction keeps its snapshot while others commit', async () => {
    const { db } = await open();
    await db.query('INSERT INTO items (label) VALUES (?)', ['a']);
    const seen = await db.transaction(
      async (t) => {
        const before = (await t.query<{ n: number }>('SELECT count(*) AS n FROM items')).rows[0]!.n;
        await db.query('INSERT INTO items (label) VALUES (?)', ['b']); // commits on the writer meanwhile
        const after = (await t.query<{ n: number }>('SELECT count(*) AS n FROM items')).rows[0]!.n;
        return [before, after];
      },
      { readOnly: true },
    );
    expect(seen).toEqual([1, 1]);
    expect(await count(db)).toBe(2);
  });

  it('with no readers, reads go to the writer', async () => {
    const { db } = await open({ readers: 0 });
    await db.query('INSERT INTO items (label) VALUES (?)', ['x']);
    expect(await count(db)).toBe(1);
    expect(db.health().connections).toBe(1);
    expect(await db.transaction(async (t) => (await t.query('SELECT label FROM items')).rows, { readOnly: true })).toEqual([{ label: 'x' }]);
  });
});

describe('transactions', () => {
  it('commit, rollback and nested savepoints', async () => {
    const { db } = await open();
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO items (id, label) VALUES (?, ?)', [1, 'outer']);
      await expect(
        tx.transaction(async (inner) => {
          await inner.query('INSERT INTO items (id, label) VALUES (?, ?)', [2, 'undone']);
          throw new Error('inner fails');
        }),
      ).rejects.toThrow('inner fails');
      await tx.transaction(async (inner) => {
        expect(inner.depth).toBe(2);
        await inner.query('INSERT INTO items (id, label) VALUES (?, ?)', [3, 'kept']);
      });
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO items (id, label) VALUES (?, ?)', [4, 'rolled back']);
        throw new Error('outer fails');
      }),
    ).rejects.toThrow('outer fails');
    expect((await db.query<{ label: string }>('SELECT label FROM items ORDER BY id')).rows.map((r) => r.label)).toEqual(['outer', 'kept']);
  });

  it('a failed statement inside rejects, and the transaction can still commit the rest', async () => {
    const { db } = await open();
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO items (id, label) VALUES (?, ?)', [1, 'a']);
      await expect(tx.query('INSERT INTO items (id, label) VALUES (?, ?)', [1, 'dup'])).rejects.toMatchObject({ sqliteCode: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
      await tx.query('INSERT INTO items (id, label) VALUES (?, ?)', [2, 'b']);
    });
    expect(await count(db)).toBe(2);
  });

  it('isolation levels are accepted and SQLite stays serializable', async () => {
    const { db } = await open();
    expect(await db.transaction(async (tx) => (await tx.query('SELECT 1 AS one')).rows[0], { isolation: 'read committed' })).toEqual({ one: 1 });
  });

  it('a session pins the writer and closes what it leaves open', async () => {
    const { db } = await open();
    await db.session(async (session) => {
      await session.query('CREATE TEMP TABLE scratch (x)');
      await session.query('INSERT INTO scratch VALUES (1)');
      expect((await session.query('SELECT count(*) AS n FROM scratch')).rows[0]).toEqual({ n: 1 });
      await session.query('BEGIN');
      await session.query('INSERT INTO items (label) VALUES (?)', ['left open']);
    });
    // The session's open transaction was rolled back when it ended, not left for the next writer.
    await db.query('INSERT INTO items (label) VALUES (?)', ['after']);
    expect((await db.query<{ label: string }>('SELECT label FROM items')).rows).toEqual([{ label: 'after' }]);
  });
});

describe('the single-writer gate', () => {
  it('one transaction at a time; writes outside queue behind it, in order', async () => {
    const { db } = await open();
    const held = gate();
    const order: string[] = [];
    const first = db.transaction(async (tx) => {
      await tx.query('INSERT INTO items (label) VALUES (?)', ['tx1']);
      await held.promise;
      order.push('tx1 commits');
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const write = db.query('INSERT INTO items (label) VALUES (?)', ['plain']).then(() => order.push('plain written'));
    const second = db.transaction(async (tx) => {
      order.push('tx2 begins');
      await tx.query('INSERT INTO items (label) VALUES (?)', ['tx2']);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(order).toEqual([]);
    expect(db.health().waiting).toBe(2);
    held.open();
    await Promise.all([first, write, second]);
    expect(order).toEqual(['tx1 commits', 'plain written', 'tx2 begins']);
    expect((await db.query<{ label: string }>('SELECT label FROM items ORDER BY id')).rows.map((r) => r.label)).toEqual(['tx1', 'plain', 'tx2']);
  });

  it('fails fast with PoolExhausted past maxWaiters, and with AcquireTimeout after acquireTimeoutMs', async () => {
    const { db } = await open({ maxWaiters: 2, acquireTimeoutMs: 200 });
    const held = gate();
    const holder = db.transaction(async (tx: Transaction) => {
      await tx.query('INSERT INTO items (label) VALUES (?)', ['holder']);
      await held.promise;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const waiting = [db.transaction(async () => 'w1').catch((e: unknown) => e), db.query('INSERT INTO items (label) VALUES (?)', ['w2']).catch((e: unknown) => e)];
    const third = (await db.transaction(async () => 'w3').catch((e: unknown) => e)) as PoolExhausted;
    expect(third).toBeInstanceOf(PoolExhausted);
    expect(third.maxWaiters).toBe(2);
    expect(third.message).toMatch(/maxWaiters/);
    const timedOut = (await Promise.all(waiting)) as AcquireTimeout[];
    for (const error of timedOut) {
      expect(error).toBeInstanceOf(AcquireTimeout);
      expect(error.timeoutMs).toBe(200);
    }
    expect(db.stats()).toMatchObject({ poolExhausted: 1, acquireTimeouts: 2 });
    held.open();
    await holder;
    expect((await db.query<{ label: string }>('SELECT label FROM items')).rows).toEqual([{ label: 'holder' }]);
  });

  it('the context deadline bounds the wait too', async () => {
    const { db } = await open({ acquireTimeoutMs: 5_000 });
    const held = gate();
    const holder = db.transaction(async () => held.promise);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = Date.now();
    await expect(db.transaction(async () => 1, { ctx: { timeoutMs: 100 } })).rejects.toBeInstanceOf(AcquireTimeout);
    expect(Date.now() - started).toBeLessThan(2_000);
    held.open();
    await holder;
  });
});

describe('statement timeouts', () => {
  it('a statement past its deadline fails on time, even behind one SQLite cannot interrupt', async () => {
    const { db } = await open({ readers: 1 });
    const slow = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000) SELECT count(*) AS n FROM c';
    const started = Date.now();
    const first = db.query(slow, [], { timeoutMs: 300 }).catch((e: unknown) => e);
    const behind = db.query('SELECT count(*) AS n FROM items', [], { timeoutMs: 200 }).catch((e: unknown) => e);
    const [a, b] = await Promise.all([first, behind]);
    expect(a).toBeInstanceOf(StatementTimeout);
    expect((a as StatementTimeout).timeoutMs).toBe(300);
    expect(b).toBeInstanceOf(StatementTimeout);
    expect(Date.now() - started).toBeLessThan(1_500);
    // A write that times out after it was sent may still happen (this one inserts nothing): its outcome is unknown.
    const write = await db.query(`INSERT INTO items (label) SELECT 'never' FROM (${slow}) WHERE n < 0`, [], { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(write).toBeInstanceOf(OutcomeUnknown);
    expect((write as OutcomeUnknown).retryable).toBe(false);
    // The worker finishes what it was given, then serves again.
    expect((await db.query('SELECT count(*) AS n FROM items')).rows).toEqual([{ n: 0 }]);
    await expect(db.query('SELECT 1 AS one', [], { timeoutMs: 5_000 })).resolves.toMatchObject({ rows: [{ one: 1 }] });
  });
});

describe('the request queue', () => {
  it('caps requests per thread with QueueFull naming the cap', async () => {
    const { db } = await open({ maxQueuedRequests: 50, readers: 1 });
    const results = await Promise.all(Array.from({ length: 80 }, (_, i) => db.query('INSERT INTO items (label) VALUES (?)', [`r${i}`]).then(() => 'ok', (e: unknown) => e)));
    const full = results.filter((result) => result instanceof QueueFull) as QueueFull[];
    expect(results.filter((result) => result === 'ok')).toHaveLength(50);
    expect(full).toHaveLength(30);
    expect(full[0]!.limit).toBe(50);
    expect(full[0]!.cap).toMatch(/maxQueuedRequests/);
    expect(full[0]!.retryable).toBe(true);
    // Once drained, the queue takes requests again.
    expect(await count(db)).toBe(50);
  });

  it('many statements issued at once in one transaction land in order', async () => {
    const { db } = await open();
    const rows = Array.from({ length: 20_000 }, (_, i) => [i, `row ${i}`]);
    await db.transaction((tx) => Promise.all(rows.map((row) => tx.query('INSERT INTO items (id, label) VALUES (?, ?)', row))));
    const { rows: last } = await db.query('SELECT id, label FROM items ORDER BY id DESC LIMIT 1');
    expect(last).toEqual([{ id: 19_999, label: 'row 19999' }]);
    expect(await count(db)).toBe(20_000);
    const ids = Array.from({ length: 5_000 }, (_, i) => i * 4);
    const found = await Promise.all(ids.map((id) => db.query<{ label: string }>('SELECT label FROM items WHERE id = ?', [id])));
    expect(found.map((result) => result.rows[0]!.label)).toEqual(ids.map((id) => `row ${id}`));
  });
});
