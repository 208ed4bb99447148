/**
 * The two stream stores for tests that make identical assertions on both: SQLite (a file in a
 * fresh temp directory) and Postgres (a fresh database on the machine's server). A backend's
 * database is opened once per file (`setup`) and each `open` gets a store on a table prefix of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem, type Clock } from '../../../src/actors/index.js';
import { openStreams, type SqlStreamStore, type SqlStreamStoreOptions } from '../../../src/bus/index.js';
import type { Database } from '../../../src/data/index.js';
import { createPostgresPool, type PostgresDatabase } from '../../../src/data/postgres.js';
import { openSqlite } from '../../../src/data/sqlite/index.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';

export interface StreamBackendCase {
  readonly name: 'sqlite' | 'postgres';
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** A store on a fresh table prefix (or on `table` when given, to reopen one). */
  open(clock?: Clock, options?: SqlStreamStoreOptions): Promise<SqlStreamStore>;
  readonly db: Database;
  /** For Postgres: the fresh database's coordinates (to open a second pool, or a child process). */
  readonly pg?: FreshDatabase;
  /** For SQLite: the file. */
  readonly file?: string;
}

let prefixes = 0;
export const nextPrefix = (): string => `st${process.pid}_${++prefixes}`;

function sqlCase(name: 'sqlite' | 'postgres'): StreamBackendCase {
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
      system = new ActorSystem({ node: `streams-${name}` });
      if (name === 'sqlite') {
        dir = mkdtempSync(join(tmpdir(), 'molo-streams-'));
        file = join(dir, 'streams.db');
        db = await openSqlite(system, { file });
      } else {
        fresh = freshDatabase('streams');
        const pool: PostgresDatabase = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 8, max: 8 });
        // Every connection open before the first test: sockets a test sees appear count as its leaks.
        const deadline = Date.now() + 10_000;
        while (pool.health().connections < 8 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        db = pool;
      }
    },
    async teardown() {
      await db?.close();
      fresh?.drop();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      system?.shutdown();
      // The case outlives its file where files share the module cache: the next file's setup starts from nothing.
      system = db = dir = fresh = file = undefined;
    },
    open(clock, options = {}) {
      return openStreams(db!, { table: nextPrefix(), ...options, ...(clock === undefined ? {} : { clock }) });
    },
  };
}

export const STREAM_BACKENDS: readonly StreamBackendCase[] = [sqlCase('sqlite'), sqlCase('postgres')];

/** `count` payloads `m<i>` published at once (group-committed), resolving with their sequences. */
export async function publishMany(store: SqlStreamStore, stream: string, count: number, from = 0): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = 0; i < count; i += 500) {
    const acks = await Promise.all(Array.from({ length: Math.min(500, count - i) }, (_, k) => store.publish(stream, Buffer.from(`m${from + i + k}`))));
    seqs.push(...acks.map((ack) => ack.seq));
  }
  return seqs;
}
