/**
 * The two task queue stores for tests that make identical assertions on both: SQLite (a file in a
 * fresh temp directory) and Postgres (a fresh database on the machine's server). A backend's
 * database is opened once per file (`setup`); each `open` gets a queue on a table prefix of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem, type Clock } from '../../../src/actors/index.js';
import { openTaskQueue, type SqlTaskQueue, type TaskQueueOptions } from '../../../src/bus/index.js';
import type { Database } from '../../../src/data/index.js';
import { createPostgresPool, type PostgresDatabase } from '../../../src/data/postgres.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';

export interface TaskBackendCase {
  readonly name: 'sqlite' | 'postgres';
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** A queue store on a fresh table prefix (or `options.table`, to reopen one). */
  open(clock?: Clock, options?: TaskQueueOptions): Promise<SqlTaskQueue>;
  readonly db: Database;
  readonly pg?: FreshDatabase;
  readonly file?: string;
}

let prefixes = 0;
export const nextTaskPrefix = (): string => `tq${process.pid}_${++prefixes}`;

function sqlCase(name: 'sqlite' | 'postgres'): TaskBackendCase {
  let system: ActorSystem | undefined;
  let db: Database | undefined;
  let dir: string | undefined;
  let fresh: FreshDatabase | undefined;
  let file: string | undefined;
  return {
    name,
    get db() {
      return db!;
    },
    get pg() {
      return fresh;
    },
    get file() {
      return file;
    },
    async setup() {
      system = new ActorSystem({ node: `tasks-${name}`, logger: false });
      if (name === 'sqlite') {
        dir = mkdtempSync(join(tmpdir(), 'molo-tasks-'));
        file = join(dir, 'tasks.db');
        db = await openSqlite(system, { file });
      } else {
        fresh = freshDatabase('tasks');
        const pool: PostgresDatabase = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 6, max: 6 });
        const deadline = Date.now() + 10_000;
        while (pool.health().connections < 6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        db = pool;
      }
    },
    async teardown() {
      await db?.close();
      fresh?.drop();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      system?.shutdown();
    },
    open(clock, options = {}) {
      return openTaskQueue(db!, { table: nextTaskPrefix(), ...options, ...(clock === undefined ? {} : { clock }) });
    },
  };
}

export const TASK_BACKENDS: readonly TaskBackendCase[] = [sqlCase('sqlite'), sqlCase('postgres')];
