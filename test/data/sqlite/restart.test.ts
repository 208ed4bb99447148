/**
 * A worker thread that dies (here: process.exit inside the writer's thread host, as a crash would)
 * is restarted by the supervisor; statements it held fail typed, the next ones run on the new
 * handle, and nothing of the dead handle's transaction survives.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { behaviourModule, type ActorSystem } from '../../../src/actors/index.js';
import { ConnectionLost } from '../../../src/data/index.js';
import type { Logger } from '../../../src/telemetry/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { openTemp, type TempDatabase } from './support.js';

const crasher = new URL('./fixtures/crasher.ts', import.meta.url);

let system: ActorSystem;
let temp: TempDatabase;
const events: Record<string, unknown>[] = [];

function eventLogger(): Logger {
  const record = (fields: object | string): void => {
    if (typeof fields === 'object') events.push(fields as Record<string, unknown>);
  };
  const logger: Logger = { trace: record, debug: record, info: record, warn: record, error: record, fatal: record, child: () => logger, isLevelEnabled: () => false };
  return logger;
}

beforeEach(async () => {
  events.length = 0;
  system = testSystem();
  temp = await openTemp(system, { logger: eventLogger() });
  await temp.db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
});

afterEach(async () => {
  await temp.dispose();
});

/** Ends the thread hosting `host` from inside it. */
async function killThread(host: string, code = 3): Promise<void> {
  const killer = await system.spawnPlaced(behaviourModule(crasher, 'crasher'), { placement: 'thread', host });
  system.send(killer, { exit: code });
}

it('the writer thread dies, the supervisor restarts it, the next statements work', async () => {
  const { db } = temp;
  await db.query('INSERT INTO items (label) VALUES (?)', ['before']);
  await killThread(db.hosts.writer);
  await eventually(() => db.stats().restarts === 1 && db.health().healthy, 10_000, 'the writer to restart');
  expect(events.some((event) => event.event === 'sqlite.thread_exited' && event.role === 'writer')).toBe(true);
  expect(events.some((event) => event.event === 'sqlite.thread_restarted' && event.role === 'writer' && event.generation === 2)).toBe(true);
  await db.query('INSERT INTO items (label) VALUES (?)', ['after']);
  expect((await db.query<{ label: string }>('SELECT label FROM items ORDER BY id')).rows.map((row) => row.label)).toEqual(['before', 'after']);
  await db.transaction(async (tx) => tx.query('INSERT INTO items (label) VALUES (?)', ['in a transaction']));
  expect((await db.query('SELECT count(*) AS n FROM items')).rows).toEqual([{ n: 3 }]);
});

it('a transaction on a writer that died fails with ConnectionLost, and its writes are gone', async () => {
  const { db } = temp;
  const outcome = await db
    .transaction(async (tx) => {
      await tx.query('INSERT INTO items (label) VALUES (?)', ['uncommitted']);
      await killThread(db.hosts.writer);
      await eventually(() => db.stats().restarts === 1, 10_000, 'the writer to restart');
      // Bound to the dead handle: refused rather than run, outside any transaction, on the new one.
      return tx.query('INSERT INTO items (label) VALUES (?)', ['orphan']);
    })
    .catch((error: unknown) => error);
  expect(outcome).toBeInstanceOf(ConnectionLost);
  expect((outcome as ConnectionLost).retryable).toBe(true);
  // The dead handle's open transaction (and its write lock) went with it.
  await db.transaction(async (tx) => tx.query('INSERT INTO items (label) VALUES (?)', ['next']));
  expect((await db.query('SELECT label FROM items')).rows).toEqual([{ label: 'next' }]);
});

it('a reader thread dies: reads go on, on the other reader and then on the restarted one', async () => {
  const { db } = temp;
  await db.query('INSERT INTO items (label) VALUES (?)', ['x']);
  await killThread(db.hosts.readers[0]!);
  const reads = await Promise.all(Array.from({ length: 50 }, () => db.query('SELECT count(*) AS n FROM items').catch((e: unknown) => e)));
  // Reads in flight on the dying reader may fail (retryable); none is lost silently.
  for (const read of reads) {
    if (read instanceof Error) expect(read).toBeInstanceOf(ConnectionLost);
    else expect((read as { rows: unknown[] }).rows).toEqual([{ n: 1 }]);
  }
  await eventually(() => db.stats().restarts === 1 && db.health().connections === 3, 10_000, 'the reader to restart');
  expect((await Promise.all(Array.from({ length: 10 }, () => db.query('SELECT count(*) AS n FROM items')))).map((r) => r.rows[0])).toEqual(
    Array.from({ length: 10 }, () => ({ n: 1 })),
  );
});

it('past maxRestarts the supervisor gives up: unhealthy, statements fail with ConnectionLost, close still works', async () => {
  await temp.dispose();
  temp = await openTemp(system, { maxRestarts: 0, logger: eventLogger() });
  const { db } = temp;
  await killThread(db.hosts.writer);
  await eventually(() => !db.health().healthy && db.health().reason !== 'the writer thread is restarting', 10_000, 'the supervisor to give up');
  expect(db.health().reason).toMatch(/gave up/);
  expect(events.some((event) => event.event === 'sqlite.supervisor_gave_up')).toBe(true);
  await expect(db.query('SELECT 1')).rejects.toBeInstanceOf(ConnectionLost);
  await expect(db.query('CREATE TABLE t (x)')).rejects.toBeInstanceOf(ConnectionLost);
  await expect(db.transaction(async () => 1)).rejects.toBeInstanceOf(ConnectionLost);
  await expect(db.ping()).rejects.toBeInstanceOf(ConnectionLost);
});
