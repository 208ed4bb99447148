/**
 * The Postgres cases: Molo against postgres.js, node-postgres and node-postgres in pipeline mode,
 * each used the way its documentation shows (postgres.js prepares tagged statements, pg sends an
 * unnamed statement per query).
 * - pg_sequential: `select $1::int`, awaited one at a time on one connection;
 * - pg_pool: the same statements issued at once through a pool of 10 connections (pg-pipeline: ten
 *   pipelined pg.Clients, statement i on client i mod 10, since pg.Pool itself cannot pipeline);
 * - pg_one_conn: the same statements issued at once over a single connection (pipelining);
 * - pg_fetch: every row of `fetch_rows` (int, text, timestamptz) in one query; ops are rows.
 */
import pg from 'pg';
import postgres from 'postgres';
import type { ActorSystem } from '../../src/actors/index.js';
import type { Database } from '../../src/data/database.js';
import type { ConnectPostgres, CreatePostgresPool, MoloEntry, MoloPgConnection } from './molo.js';
import { concurrently, type Absent, type CaseSpec, type Contender } from './rounds.js';
import { FETCH_SQL, type BenchServer } from './server.js';

export const PG_CASES = ['pg_sequential', 'pg_pool', 'pg_one_conn', 'pg_fetch'] as const;
export type PgCase = (typeof PG_CASES)[number];

const SELECT_INT = 'select $1::int';
const POOL_SIZE = 10;

export interface PgSizes {
  /** Statements per run of the three select cases. */
  readonly statements: number;
  readonly rounds: number;
  /** Statements in the untimed warm-up run. */
  readonly warmup: number;
}

/** What each case needs of a client, whatever the library. */
interface PgClient {
  /** Runs `select $1::int` with `i`; resolves with the value read back. */
  selectInt(i: number): Promise<number>;
  /** Runs FETCH_SQL with room for `rows` rows; resolves with the rows. */
  fetchAll(rows: number): Promise<readonly Record<string, unknown>[]>;
  close(): Promise<void>;
}

type Open = () => Promise<PgClient>;

function postgresJs(server: BenchServer, max: number): Open {
  return async () => {
    const sql = postgres({ host: server.host, port: server.port, user: server.user, database: server.database, max, onnotice: () => {} });
    await sql`select 1`;
    return {
      selectInt: async (i) => (await sql`select ${i}::int`)[0]!.int4 as number,
      fetchAll: async () => await sql`select id, name, at from fetch_rows`,
      close: () => sql.end({ timeout: 5 }),
    };
  };
}

function pgClient(server: BenchServer, pipeline: boolean): Open {
  return async () => {
    const client = new pg.Client({ host: server.host, port: server.port, user: server.user, database: server.database, pipeline });
    await client.connect();
    return {
      selectInt: async (i) => (await client.query<{ int4: number }>(SELECT_INT, [i])).rows[0]!.int4,
      fetchAll: async () => (await client.query(FETCH_SQL)).rows as Record<string, unknown>[],
      close: () => client.end(),
    };
  };
}

function pgPool(server: BenchServer): Open {
  return async () => {
    const pool = new pg.Pool({ host: server.host, port: server.port, user: server.user, database: server.database, max: POOL_SIZE });
    // Open every connection before timing, as the other pools do in their warm-up.
    const clients = await Promise.all(Array.from({ length: POOL_SIZE }, () => pool.connect()));
    for (const client of clients) client.release();
    return {
      selectInt: async (i) => (await pool.query<{ int4: number }>(SELECT_INT, [i])).rows[0]!.int4,
      fetchAll: async () => (await pool.query(FETCH_SQL)).rows as Record<string, unknown>[],
      close: () => pool.end(),
    };
  };
}

/** Ten pipelined clients taking statements in turn: pg's fastest way to spread load over connections. */
function pgPipelinedClients(server: BenchServer): Open {
  return async () => {
    const clients = Array.from(
      { length: POOL_SIZE },
      () => new pg.Client({ host: server.host, port: server.port, user: server.user, database: server.database, pipeline: true }),
    );
    await Promise.all(clients.map((client) => client.connect()));
    return {
      selectInt: async (i) => (await clients[i % POOL_SIZE]!.query<{ int4: number }>(SELECT_INT, [i])).rows[0]!.int4,
      fetchAll: async () => (await clients[0]!.query(FETCH_SQL)).rows as Record<string, unknown>[],
      close: async () => void (await Promise.all(clients.map((client) => client.end()))),
    };
  };
}

function moloConnection(system: ActorSystem, connect: ConnectPostgres, server: BenchServer): Open {
  return async () => {
    const connection: MoloPgConnection = await connect(system, { host: server.host, port: server.port, user: server.user, database: server.database });
    return {
      selectInt: async (i) => (await connection.query(SELECT_INT, [i])).rows[0]!.int4 as number,
      fetchAll: async (rows) => (await connection.query(FETCH_SQL, [], undefined, { maxRows: rows })).rows,
      close: () => connection.close(),
    };
  };
}

function moloPool(system: ActorSystem, create: CreatePostgresPool, server: BenchServer): Open {
  return async () => {
    const db: Database = await create(system, {
      host: server.host,
      port: server.port,
      user: server.user,
      database: server.database,
      min: POOL_SIZE,
      max: POOL_SIZE,
    });
    return {
      selectInt: async (i) => (await db.query(SELECT_INT, [i])).rows[0]!.int4 as number,
      fetchAll: async (rows) => (await db.query(FETCH_SQL, [], undefined, { maxRows: rows })).rows,
      close: () => db.close(),
    };
  };
}

/** A contender whose client opens once per case and runs `body` per timed run. */
function contender(impl: string, open: Open, body: (client: PgClient, n: number) => Promise<number>): Contender {
  let client: PgClient | undefined;
  return {
    impl,
    open: async () => void (client = await open()),
    run: (n) => body(client!, n),
    close: async () => {
      const current = client;
      client = undefined;
      await current?.close();
    },
  };
}

async function sequential(client: PgClient, n: number): Promise<number> {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += await client.selectInt(i);
  return sum;
}

/** Every statement issued at once: the client decides how to spread them over its connections. */
const allAtOnce = (client: PgClient, n: number): Promise<number> => concurrently(n, n, (i) => client.selectInt(i));

/** Sums the ids and checks the row was decoded (a string name, a Date), so every library does the same work. */
async function fetchRows(client: PgClient, rows: number): Promise<number> {
  const result = await client.fetchAll(rows);
  let sum = 0;
  for (const row of result) sum += row.id as number;
  const last = result[result.length - 1];
  if (last !== undefined && (typeof last.name !== 'string' || !(last.at instanceof Date))) {
    throw new Error(`row not decoded: name ${typeof last.name}, at ${Object.prototype.toString.call(last.at)}`);
  }
  return sum;
}

export interface MoloPg {
  readonly system: ActorSystem;
  readonly connect: MoloEntry<ConnectPostgres>;
  readonly pool: MoloEntry<CreatePostgresPool>;
}

export function pgCases(server: BenchServer, sizes: PgSizes, molo: MoloPg): CaseSpec[] {
  const moloOne = (body: (client: PgClient, n: number) => Promise<number>): Contender | Absent =>
    molo.connect.fn === undefined
      ? { impl: 'molo', unavailable: molo.connect.unavailable! }
      : contender('molo', moloConnection(molo.system, molo.connect.fn, server), body);
  const moloPooled = (body: (client: PgClient, n: number) => Promise<number>): Contender | Absent =>
    molo.pool.fn === undefined ? { impl: 'molo', unavailable: molo.pool.unavailable! } : contender('molo', moloPool(molo.system, molo.pool.fn, server), body);
  const selects = { n: sizes.statements, warmupN: sizes.warmup, rounds: sizes.rounds, unit: 'queries', expected: (n: number) => (n * (n - 1)) / 2 };

  return [
    {
      name: 'pg_sequential',
      ...selects,
      contenders: [
        moloOne(sequential),
        contender('postgres.js', postgresJs(server, 1), sequential),
        contender('pg', pgClient(server, false), sequential),
        contender('pg-pipeline', pgClient(server, true), sequential),
      ],
    },
    {
      name: 'pg_pool',
      ...selects,
      contenders: [
        moloPooled(allAtOnce),
        contender('postgres.js', postgresJs(server, POOL_SIZE), allAtOnce),
        contender('pg', pgPool(server), allAtOnce),
        contender('pg-pipeline', pgPipelinedClients(server), allAtOnce),
      ],
    },
    {
      name: 'pg_one_conn',
      ...selects,
      contenders: [
        moloOne(allAtOnce),
        contender('postgres.js', postgresJs(server, 1), allAtOnce),
        contender('pg', pgClient(server, false), allAtOnce),
        contender('pg-pipeline', pgClient(server, true), allAtOnce),
      ],
    },
    {
      name: 'pg_fetch',
      n: server.fetchRows,
      // The whole table each time: a smaller warm-up would be a different query plan and result size.
      warmupN: server.fetchRows,
      rounds: sizes.rounds,
      unit: 'rows',
      expected: (n) => (n * (n + 1)) / 2,
      contenders: [
        moloOne(fetchRows),
        contender('postgres.js', postgresJs(server, 1), fetchRows),
        contender('pg', pgClient(server, false), fetchRows),
        { impl: 'pg-pipeline', unavailable: 'n/a: one query; pipeline mode changes nothing' },
      ],
    },
  ];
}
