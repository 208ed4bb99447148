/**
 * Session state on the shared pool (04 BP-2, issue 26 item 2): statements that leave state in the
 * server session are refused on the shared `db.query()` and in pooled transactions, allowed in a
 * pinned `db.session(fn)`, and a session's state is reset before its connection serves anyone else.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ActorSystem } from '../../src/actors/index.js';
import { DbError } from '../../src/data/index.js';
import { createPostgresPool, type PostgresDatabase } from '../../src/data/postgres.js';
import { freshDatabase, type FreshDatabase } from '../support/pg.js';
import { testSystem } from '../support/systems.js';

let fresh: FreshDatabase;
let system: ActorSystem;
let db: PostgresDatabase | undefined;

beforeAll(() => {
  fresh = freshDatabase('session');
});
afterAll(() => fresh.drop());
afterEach(async () => {
  await db?.close();
  db = undefined;
  await system?.shutdown();
});

/** One connection, so every caller after the probe runs on the connection the probe used. */
async function open(): Promise<PostgresDatabase> {
  system = testSystem();
  db = await createPostgresPool(system, { host: fresh.host, port: fresh.port, user: fresh.user, database: fresh.database, min: 1, max: 1 });
  return db;
}

/** Each kind of session-state statement, in an order that also runs in one session. */
const SESSION_STATEMENTS = [
  'SET search_path TO probe, public',
  "SET SESSION statement_timeout = '10s'",
  'RESET statement_timeout',
  "SELECT set_config('application_name', 'probe', false)",
  'LISTEN probe_channel',
  'UNLISTEN probe_channel',
  'LISTEN probe_channel',
  'SELECT pg_advisory_lock(4242)',
  'SELECT pg_try_advisory_lock(4243)',
  'SELECT pg_advisory_lock_shared(4244)',
  'PREPARE probe_stmt AS SELECT 1 AS one',
  'DEALLOCATE probe_stmt',
  'PREPARE probe_stmt2 AS SELECT 2 AS two',
  'CREATE TEMP TABLE probe_temp (id int)',
  'CREATE TEMPORARY TABLE probe_temp2 (id int)',
  '/* lead */ SELECT 1; SET search_path TO probe',
];

const codeOf = (error: unknown): string | undefined => (error instanceof DbError ? error.code : undefined);

describe('session state on the shared Postgres pool', () => {
  it('refuses each session-state statement on the shared path, naming db.session', async () => {
    const pool = await open();
    const outcomes: Record<string, string> = {};
    for (const sql of [...SESSION_STATEMENTS, 'DISCARD ALL']) {
      outcomes[sql] = await pool.query(sql).then(
        () => 'ran',
        (error: unknown) => codeOf(error) ?? String(error),
      );
    }
    const refused = Object.values(outcomes).filter((outcome) => outcome === 'DB_SESSION_STATE_REFUSED').length;
    console.log(`[probe] shared path: ${refused}/${Object.keys(outcomes).length} session-state statements refused`);
    expect(outcomes).toEqual(Object.fromEntries(Object.keys(outcomes).map((sql) => [sql, 'DB_SESSION_STATE_REFUSED'])));
    await expect(pool.query('SET search_path TO probe')).rejects.toThrow(/db\.session\(fn\)/);
  });

  it("a probe's SET search_path does not leak into the next caller's statement", async () => {
    const pool = await open();
    await pool.query('SET search_path TO probe_leak, public').catch(() => undefined);
    const seen = (await pool.query<{ search_path: string }>('SHOW search_path')).rows[0]!.search_path;
    console.log(`[probe] next caller's search_path: ${seen}`);
    expect(seen).not.toContain('probe_leak');
  });

  it('allows what ends with the statement or the transaction, and refuses session state inside a pooled transaction', async () => {
    const pool = await open();
    for (const sql of ["SELECT 'SET search_path' AS s", 'SELECT 1 AS "set"', 'SELECT pg_advisory_xact_lock(7)', 'SET LOCAL search_path TO public']) {
      await expect(pool.query(sql)).resolves.toBeDefined();
    }
    const inside = await pool.transaction(async (tx) => {
      await tx.query('SET LOCAL search_path TO probe_local, public');
      await tx.query('SELECT pg_advisory_xact_lock(8)');
      await tx.query("SELECT set_config('application_name', 'local_probe', true)");
      const refused = await tx.query('SET search_path TO probe_tx').then(
        () => 'ran',
        (error: unknown) => codeOf(error),
      );
      return { refused, path: (await tx.query<{ search_path: string }>('SHOW search_path')).rows[0]!.search_path };
    });
    expect(inside).toEqual({ refused: 'DB_SESSION_STATE_REFUSED', path: 'probe_local, public' });
    expect((await pool.query<{ search_path: string }>('SHOW search_path')).rows[0]!.search_path).not.toContain('probe');
  });

  it('allows every kind in a pinned session and resets it before the connection serves the next caller', async () => {
    const pool = await open();
    const pidBefore = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const inside = await pool.session(async (session) => {
      for (const sql of SESSION_STATEMENTS) await session.query(sql);
      await session.query('INSERT INTO probe_temp VALUES (1)');
      return (await session.query<{ search_path: string }>('SHOW search_path')).rows[0]!.search_path;
    });
    expect(inside).toBe('probe');
    const state = (
      await pool.query<{ pid: number; search_path: string; app: string; locks: string; listens: string; prepared: string; temp: string | null }>(
        `SELECT pg_backend_pid() AS pid, current_setting('search_path') AS search_path, current_setting('application_name') AS app,
           (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())::text AS locks,
           (SELECT count(*) FROM pg_listening_channels())::text AS listens,
           (SELECT count(*) FROM pg_prepared_statements WHERE from_sql)::text AS prepared,
           to_regclass('pg_temp.probe_temp')::text AS temp`,
      )
    ).rows[0]!;
    console.log(`[probe] after a session: ${JSON.stringify(state)} (pid before ${pidBefore})`);
    expect(state).toMatchObject({ search_path: '"$user", public', locks: '0', listens: '0', prepared: '0', temp: null });
    expect(state.app).not.toBe('probe');
    // Reset, not reconnected: the same server session serves on, and its statement cache still works.
    expect(state.pid).toBe(pidBefore);
    for (let i = 0; i < 3; i++) expect((await pool.query<{ n: number }>('SELECT $1::int AS n', [i])).rows).toEqual([{ n: i }]);
  });
});
