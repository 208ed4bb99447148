/** Shared by the connection tests: a connection to a fresh database, closed whatever happens. */
import type { ActorSystem } from '../../../src/actors/index.js';
import { connectPostgres, type PgConfig, type PgConnection } from '../../../src/data/pg/index.js';
import type { FreshDatabase } from '../../support/pg.js';
import { testSystem } from '../../support/systems.js';

export function configOf(db: FreshDatabase, extra: Partial<PgConfig> = {}): PgConfig {
  return { host: db.host, port: db.port, user: db.user, database: db.database, ...extra };
}

export async function withConnection<T>(db: FreshDatabase, fn: (conn: PgConnection, system: ActorSystem) => Promise<T>, extra: Partial<PgConfig> = {}): Promise<T> {
  const system = testSystem();
  const conn = await connectPostgres(system, configOf(db, extra));
  try {
    return await fn(conn, system);
  } finally {
    await conn.close();
  }
}

/** The rejection of `promise` (fails if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}
