/**
 * SQLITE_BUSY from outside: another connection (here a plain better-sqlite3 handle in the test's
 * own thread, as another process would) holds the write lock past busy_timeout. The writer retries
 * a few times, then fails loudly with SqliteBusy, counted in molo_sqlite_busy_total and logged.
 */
import Database from 'better-sqlite3';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { SqliteBusy } from '../../../src/data/index.js';
import type { Logger } from '../../../src/telemetry/index.js';
import { testSystem } from '../../support/systems.js';
import { openTemp, type TempDatabase } from './support.js';

let system: ActorSystem;
let temp: TempDatabase;
let other: Database.Database | undefined;

/** A logger that keeps what it is given. */
function recordingLogger(lines: Record<string, unknown>[]): Logger {
  const record =
    (level: string) =>
    (fields: object | string, message?: string): void => {
      lines.push(typeof fields === 'string' ? { level, msg: fields } : { level, ...fields, msg: message });
    };
  const logger: Logger = {
    trace: record('trace'),
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
    fatal: record('fatal'),
    child: () => logger,
    isLevelEnabled: () => true,
  };
  return logger;
}

const registry = new Registry();
const lines: Record<string, unknown>[] = [];

beforeEach(async () => {
  system = testSystem();
  temp = await openTemp(system, { busyTimeoutMs: 50, busyRetries: 2, metrics: registry, logger: recordingLogger(lines) });
  await temp.db.query('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
});

afterEach(async () => {
  other?.close();
  other = undefined;
  await temp.dispose();
});

async function busyCount(): Promise<number> {
  const metric = await registry.getSingleMetric('molo_sqlite_busy_total')!.get();
  return metric.values.reduce((sum, value) => sum + value.value, 0);
}

it('a write lock held elsewhere past busy_timeout and the retries is SqliteBusy, counted and logged', async () => {
  const { db, file } = temp;
  const before = await busyCount();
  other = new Database(file);
  other.exec('BEGIN IMMEDIATE');
  const started = Date.now();
  const error = (await db.query('INSERT INTO items (label) VALUES (?)', ['blocked']).catch((e: unknown) => e)) as SqliteBusy;
  const elapsed = Date.now() - started;
  expect(error).toBeInstanceOf(SqliteBusy);
  expect(error.code).toBe('DB_SQLITE_BUSY');
  expect(error.sqliteCode).toMatch(/^SQLITE_BUSY/);
  expect(error.retryable).toBe(true);
  expect(error.message).toMatch(/3 attempts, busy_timeout 50 ms/);
  // Three attempts of 50 ms with 10 and 20 ms pauses between them.
  expect(elapsed).toBeGreaterThanOrEqual(150);
  expect(await busyCount()).toBe(before + 1);
  expect(db.stats().busy).toBe(1);
  expect(lines.some((line) => line.event === 'sqlite.busy' && line.level === 'warn' && line.file === file)).toBe(true);

  // A transaction's BEGIN IMMEDIATE is refused the same way, and the gate is free again after it.
  await expect(db.transaction(async (tx) => tx.query('INSERT INTO items (label) VALUES (?)', ['tx']))).rejects.toBeInstanceOf(SqliteBusy);
  expect(await busyCount()).toBe(before + 2);

  // Reads are not blocked by a writer elsewhere (WAL).
  expect((await db.query('SELECT count(*) AS n FROM items')).rows).toEqual([{ n: 0 }]);

  other.exec('COMMIT');
  await db.query('INSERT INTO items (label) VALUES (?)', ['free']);
  expect((await db.query('SELECT label FROM items')).rows).toEqual([{ label: 'free' }]);
});

it('a lock released within busy_timeout and the retries is waited out, not reported', async () => {
  const { db, file } = temp;
  const before = await busyCount();
  other = new Database(file);
  other.exec('BEGIN IMMEDIATE');
  const write = db.query('INSERT INTO items (label) VALUES (?)', ['late']);
  setTimeout(() => other!.exec('COMMIT'), 40);
  await write;
  expect(await busyCount()).toBe(before);
  expect((await db.query('SELECT label FROM items')).rows).toEqual([{ label: 'late' }]);
});
