/**
 * The two backends behind one `Database`, for tests that make identical assertions on both: the
 * machine's Postgres (a fresh database per call) and a SQLite file in a fresh temp directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { ActorSystem } from '../../src/actors/index.js';
import type { Database } from '../../src/data/index.js';
import { createPostgresPool, type PostgresPoolConfig } from '../../src/data/postgres.js';
import { openSqlite, type SqliteConfig } from '../../src/data/sqlite/index.js';
import { freshDatabase } from '../support/pg.js';
import { testSystem } from '../support/systems.js';

export interface OpenedBackend {
  readonly db: Database;
  /** Closes the database and removes what the test made (database, files). */
  dispose(): Promise<void>;
}

export interface BackendCase {
  readonly name: 'postgres' | 'sqlite';
  open(system: ActorSystem, options?: { readonly pool?: Partial<PostgresPoolConfig>; readonly sqlite?: Partial<SqliteConfig> }): Promise<OpenedBackend>;
}

export const BACKENDS: readonly BackendCase[] = [
  {
    name: 'postgres',
    async open(system, options = {}) {
      const fresh = freshDatabase('tx');
      const db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 1, max: 4, ...options.pool });
      return {
        db,
        dispose: async () => {
          await db.close();
          fresh.drop();
        },
      };
    },
  },
  {
    name: 'sqlite',
    async open(system, options = {}) {
      const dir = mkdtempSync(join(tmpdir(), 'molo-sqlite-'));
      const db = await openSqlite(system, { file: join(dir, 'test.db'), ...options.sqlite });
      return {
        db,
        dispose: async () => {
          await db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

/**
 * Opens `backend` (in a fresh actor system) before each test of the enclosing `describe`, runs
 * `ready` with it, and disposes of both after the test.
 */
export function openForEachTest(
  backend: BackendCase,
  ready: (opened: OpenedBackend, system: ActorSystem) => void | Promise<void>,
  options?: Parameters<BackendCase['open']>[1],
): void {
  let system: ActorSystem | undefined;
  let opened: OpenedBackend | undefined;
  beforeEach(async () => {
    system = testSystem();
    opened = await backend.open(system, options);
    await ready(opened, system);
  });
  afterEach(async () => {
    await opened?.dispose();
    await system?.shutdown();
    opened = undefined;
    system = undefined;
  });
}
