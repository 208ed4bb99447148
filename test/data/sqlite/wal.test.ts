/**
 * The WAL stays bounded: the checkpoint scheduler truncates it when no read is open, and a read
 * transaction or cursor held past maxReadMs is rolled back (ReadTooLong) so that it can.
 */
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActorSystem, Ref } from '../../../src/actors/index.js';
import { Supervisor } from '../../../src/behaviours/index.js';
import { ReadTooLong } from '../../../src/data/index.js';
import { eventually, sleep, testSystem } from '../../support/systems.js';
import { openTemp, walBytes, type TempDatabase } from './support.js';

let system: ActorSystem;
let temp: TempDatabase | undefined;

beforeEach(() => {
  system = testSystem();
});

afterEach(async () => {
  await temp?.dispose();
  temp = undefined;
});

const fill = (db: TempDatabase['db'], rows: number): Promise<unknown> =>
  db.query('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO items (label) SELECT hex(randomblob(500)) FROM n', [rows]);

describe('the checkpoint scheduler', () => {
  it('truncates the WAL file once no read is open', async () => {
    const registry = new Registry();
    temp = await openTemp(system, { checkpointIntervalMs: 100, metrics: registry });
    const { db, file } = temp;
    await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
    await fill(db, 2_000);
    // Auto-checkpoints copy pages back but never shrink the file: it only grows to its high-water mark.
    await eventually(() => db.stats().checkpoints.ok > 0, 5_000, 'a scheduled checkpoint');
    await eventually(() => walBytes(file) === 0, 5_000, 'the WAL to be truncated');
    await fill(db, 2_000);
    expect(walBytes(file)).toBeGreaterThan(500_000);
    await eventually(() => walBytes(file) === 0, 5_000, 'the WAL to be truncated again');
    const metric = await registry.getSingleMetric('molo_sqlite_checkpoints_total')!.get();
    expect(metric.values.find((value) => value.labels.result === 'ok')!.value).toBeGreaterThan(0);
    expect((await db.query('SELECT count(*) AS n FROM items')).rows).toEqual([{ n: 4_000 }]);
  });

  it('is an actor under the database supervisor: killed, it is restarted and truncates the WAL again', async () => {
    temp = await openTemp(system, { checkpointIntervalMs: 100 });
    const { db, file } = temp;
    await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
    const ticker = async (): Promise<Ref | undefined> => {
      const child = (await Supervisor.whichChildren(system, db.supervisor)).find((c) => c.id === 'checkpoint');
      return typeof child?.ref === 'object' && system.isAlive(child.ref) ? child.ref : undefined;
    };
    const first = await ticker();
    expect(first).toBeDefined();
    system.exit(first!, 'kill');
    await eventually(() => !system.isAlive(first!), 5_000, 'the ticker killed');
    let second: Ref | undefined;
    for (let i = 0; i < 50 && (second === undefined || second === first); i++) {
      await sleep(50);
      second = await ticker();
    }
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    const before = db.stats().checkpoints.ok;
    await fill(db, 2_000);
    expect(walBytes(file)).toBeGreaterThan(500_000);
    await eventually(() => db.stats().checkpoints.ok > before && walBytes(file) === 0, 5_000, 'the restarted ticker to truncate the WAL');
  });

  it('with no interval there is no ticker, and the WAL is left to grow until asked', async () => {
    temp = await openTemp(system, { checkpointIntervalMs: 0 });
    const { db, file } = temp;
    expect((await Supervisor.whichChildren(system, db.supervisor)).map((c) => c.id)).not.toContain('checkpoint');
    await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
    await fill(db, 2_000);
    await sleep(300);
    expect(walBytes(file)).toBeGreaterThan(500_000);
    await db.checkpoint('TRUNCATE');
    expect(walBytes(file)).toBe(0);
  });

  it('waits while a read is open, and checkpoints on demand', async () => {
    temp = await openTemp(system, { checkpointIntervalMs: 50 });
    const { db, file } = temp;
    await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
    await eventually(() => walBytes(file) === 0, 5_000, 'the WAL to be truncated');
    const held = await db.transaction(
      async (tx) => {
        await tx.query('SELECT count(*) FROM items');
        await fill(db, 1_000);
        const before = db.stats().checkpoints.ok;
        await sleep(300);
        // Six intervals passed with a read open: the scheduler left the WAL alone.
        return { checkpoints: db.stats().checkpoints.ok - before, wal: walBytes(file) };
      },
      { readOnly: true },
    );
    expect(held.checkpoints).toBe(0);
    expect(held.wal).toBeGreaterThan(0);
    await eventually(() => walBytes(file) === 0, 5_000, 'the WAL to be truncated after the read');
    await fill(db, 500);
    const result = await db.checkpoint('TRUNCATE');
    expect(result.busy).toBe(0);
    expect(walBytes(file)).toBe(0);
  });
});

describe('the read cap', () => {
  it('a read-only transaction open past maxReadMs is rolled back with ReadTooLong', async () => {
    temp = await openTemp(system, { maxReadMs: 200, checkpointIntervalMs: 50 });
    const { db, file } = temp;
    await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
    const outcome = await db
      .transaction(
        async (tx) => {
          await tx.query('SELECT count(*) FROM items');
          await fill(db, 1_000);
          await sleep(400);
          return tx.query('SELECT count(*) FROM items');
        },
        { readOnly: true },
      )
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ReadTooLong);
    expect((outcome as ReadTooLong).maxReadMs).toBe(200);
    expect((outcome as ReadTooLong).message).toMatch(/maxReadMs/);
    await eventually(() => walBytes(file) === 0, 5_000, 'the WAL to be truncated');
    // The reader serves new reads as before.
    expect((await db.query('SELECT count(*) AS n FROM items')).rows).toEqual([{ n: 1_000 }]);
  });

  it('a cursor held past maxReadMs fails its next fetch with ReadTooLong', async () => {
    temp = await openTemp(system, { maxReadMs: 200 });
    const { db } = temp;
    await db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
    await fill(db, 3_000);
    const seen: number[] = [];
    const error = await (async () => {
      for await (const row of db.stream<{ id: number }>('SELECT id FROM items ORDER BY id', [], undefined, { batchSize: 100 })) {
        seen.push(row.id);
        if (seen.length === 150) await sleep(400);
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReadTooLong);
    // The first batch and the prefetched second were delivered; nothing after the cap.
    expect(seen.length).toBeLessThanOrEqual(300);
    expect(seen.slice(0, 3)).toEqual([1, 2, 3]);
    let rows = 0;
    for await (const _ of db.stream('SELECT id FROM items')) rows++;
    expect(rows).toBe(3_000);
  });
});
