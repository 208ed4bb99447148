/**
 * The Postgres server every Postgres case runs against: a fresh `molo_bench_<random>` database on
 * 127.0.0.1:5432 (trust auth, user postgres; MOLO_PG_HOST/PORT/USER override), set up and dropped
 * through node-postgres so the suite needs no psql.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ActorSystem } from '../../src/actors/index.js';
import { benchLog, messageOf } from '../suite.js';

export interface BenchServer {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  /** Rows in `fetch_rows` (int, text, timestamptz). */
  readonly fetchRows: number;
  drop(): Promise<void>;
}

export const FETCH_SQL = 'select id, name, at from fetch_rows';

const HOST = process.env.MOLO_PG_HOST ?? '127.0.0.1';
const PORT = Number(process.env.MOLO_PG_PORT ?? 5432);
const USER = process.env.MOLO_PG_USER ?? 'postgres';

async function withClient<T>(database: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ host: HOST, port: PORT, user: USER, database, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates the database and its `fetch_rows` table; rejects when the server is not there. */
export async function createBenchServer(fetchRows: number): Promise<BenchServer> {
  const database = `molo_bench_${randomBytes(4).toString('hex')}`;
  await withClient('postgres', (client) => client.query(`CREATE DATABASE ${database}`));
  const drop = async (): Promise<void> => {
    await withClient('postgres', async (client) => {
      await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
      await client.query(`DROP DATABASE IF EXISTS ${database}`);
    });
  };
  try {
    await withClient(database, async (client) => {
      await client.query('CREATE TABLE fetch_rows (id int PRIMARY KEY, name text NOT NULL, at timestamptz NOT NULL)');
      await client.query(
        `INSERT INTO fetch_rows SELECT g, 'name-' || g, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second' FROM generate_series(1, $1::int) g`,
        [fetchRows],
      );
      await client.query('VACUUM ANALYZE fetch_rows');
    });
  } catch (error) {
    await drop().catch(() => undefined);
    throw error;
  }
  return { host: HOST, port: PORT, user: USER, database, fetchRows, drop };
}

/**
 * Runs `body` with an ActorSystem and, when the server is there, a fresh bench database (without
 * one `pg` is undefined and its contenders say they are unavailable); both are gone afterwards.
 */
export async function withBenchPostgres<T>(node: string, body: (system: ActorSystem, pg: BenchServer | undefined) => Promise<T>): Promise<T> {
  const system = new ActorSystem({ node });
  let pg: BenchServer | undefined;
  try {
    try {
      pg = await createBenchServer(0);
      benchLog(`postgres: database ${pg.database} on ${pg.host}:${pg.port}`);
    } catch (error) {
      benchLog(`postgres unavailable: ${messageOf(error)}`);
    }
    return await body(system, pg);
  } finally {
    system.shutdown();
    await pg?.drop().catch((error: unknown) => benchLog(`dropping ${pg!.database} failed: ${messageOf(error)}`));
  }
}
