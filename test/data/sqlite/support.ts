/**
 * SQLite test helpers: a database file in a fresh temp directory, removed afterwards, on a test
 * system the leak check watches.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { ActorSystem } from '../../../src/actors/index.js';
import { openSqlite, type SqliteConfig, type SqliteDatabase } from '../../../src/data/sqlite/index.js';
import { testSystem } from '../../support/systems.js';

export interface TempDatabase {
  readonly db: SqliteDatabase;
  readonly dir: string;
  readonly file: string;
  /** Closes the database and removes the directory. */
  dispose(): Promise<void>;
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'molo-sqlite-'));
}

export async function openTemp(system: ActorSystem, config: Partial<SqliteConfig> = {}): Promise<TempDatabase> {
  const dir = tempDir();
  const file = join(dir, 'test.db');
  let db: SqliteDatabase;
  try {
    db = await openSqlite(system, { file, ...config });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    db,
    dir,
    file,
    dispose: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PerTest {
  readonly system: ActorSystem;
  readonly temp: TempDatabase;
}

/**
 * Registers hooks giving each test a fresh test system and temp database (`config`), `setup` run on
 * it first; read the returned object's fields inside tests.
 */
export function tempDatabasePerTest(config: Partial<SqliteConfig>, setup: (db: SqliteDatabase) => Promise<void>): PerTest {
  const current = {} as { system: ActorSystem; temp: TempDatabase };
  beforeEach(async () => {
    current.system = testSystem();
    current.temp = await openTemp(current.system, config);
    await setup(current.temp.db);
  });
  afterEach(async () => {
    await current.temp.dispose();
    current.system.shutdown();
  });
  return current;
}

/** Size of the WAL file next to `file` (0 when it does not exist). */
export function walBytes(file: string): number {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
}
