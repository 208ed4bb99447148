/**
 * The three KV backends for tests that make identical assertions on each: memory, SQLite (a file in
 * a fresh temp directory) and Postgres (a fresh database on the machine's server). A backend's
 * database is opened once per file (`setup`) and each test gets a store on a table of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem, type Clock } from '../../../src/actors/index.js';
import type { Database } from '../../../src/data/index.js';
import { createMemoryKv, openKv, type KvCommonOptions, type KvStore, type MemoryKvOptions, type SqlKvStore } from '../../../src/data/kv/index.js';
import { createPostgresPool } from '../../../src/data/postgres.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import { freshDatabase } from '../../support/pg.js';

export interface OpenedStore {
  readonly store: KvStore;
  /** Rows (or entries) held, expired ones not yet swept included. */
  count(): Promise<number>;
  close(): Promise<void>;
}

export interface KvBackendCase {
  readonly name: 'memory' | 'sqlite' | 'postgres';
  /** Opens what the backend needs for the whole file (a database); called from beforeAll. */
  setup(): Promise<void>;
  teardown(): Promise<void>;
  open(clock: Clock, options?: KvCommonOptions & MemoryKvOptions): Promise<OpenedStore>;
  /** The database under a SQL backend (after setup). */
  readonly db?: Database;
}

let tables = 0;
const nextTable = (): string => `kv_t${process.pid}_${++tables}`;

function sqlCase(name: 'sqlite' | 'postgres', connect: (system: ActorSystem) => Promise<{ db: Database; dispose(): Promise<void> }>): KvBackendCase {
  // Not a testSystem: it outlives single tests (the leak check shuts those down after each).
  let system: ActorSystem | undefined;
  let opened: { db: Database; dispose(): Promise<void> } | undefined;
  return {
    name,
    get db() {
      return opened?.db;
    },
    async setup() {
      system = new ActorSystem({ node: `kv-${name}` });
      opened = await connect(system);
    },
    async teardown() {
      await opened?.dispose();
      system?.shutdown();
      // The case outlives its file where files share the module cache: the next file's setup starts from nothing.
      system = opened = undefined;
    },
    async open(clock, options = {}) {
      const db = opened!.db;
      const table = nextTable();
      const store: SqlKvStore = await openKv(db, { ...options, clock, table });
      return {
        store,
        count: async () => Number((await db.query(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n),
        close: () => store.close(),
      };
    },
  };
}

export const KV_BACKENDS: readonly KvBackendCase[] = [
  {
    name: 'memory',
    setup: async () => undefined,
    teardown: async () => undefined,
    async open(clock, options = {}) {
      const store = createMemoryKv({ ...options, clock });
      return { store, count: async () => store.size, close: () => store.close() };
    },
  },
  sqlCase('sqlite', async (system) => {
    const dir = mkdtempSync(join(tmpdir(), 'molo-kv-'));
    const db = await openSqlite(system, { file: join(dir, 'kv.db') });
    return {
      db,
      dispose: async () => {
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }),
  sqlCase('postgres', async (system) => {
    const fresh = freshDatabase('kv');
    const db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 4, max: 4 });
    // Every connection open before the first test: sockets a test sees appear count as its leaks.
    const deadline = Date.now() + 10_000;
    while (db.health().connections < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    return {
      db,
      dispose: async () => {
        await db.close();
        fresh.drop();
      },
    };
  }),
];

/** Polls an async check until it holds, advancing nothing itself. */
export async function eventuallyAsync(check: () => Promise<boolean>, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
