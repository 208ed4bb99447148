/**
 * Postgres for tests: the machine's server on 127.0.0.1:5432 (trust auth), with a fresh database
 * per test file so files running in parallel never see each other's tables.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export const PG_HOST = process.env.MOLO_PG_HOST ?? '127.0.0.1';
export const PG_PORT = Number(process.env.MOLO_PG_PORT ?? 5432);
export const PG_USER = process.env.MOLO_PG_USER ?? 'postgres';

/** Runs SQL through psql as the superuser; returns its unaligned output. */
export function psql(sql: string, database = 'postgres'): string {
  return execFileSync('psql', ['-h', PG_HOST, '-p', String(PG_PORT), '-U', PG_USER, '-d', database, '-v', 'ON_ERROR_STOP=1', '-Atqc', sql], {
    encoding: 'utf8',
  }).trim();
}

export interface FreshDatabase {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  /** Drops the database, terminating what is still connected to it. */
  drop(): void;
}

/** Creates an empty database named `molo_<prefix>_<random>`. */
export function freshDatabase(prefix = 'test'): FreshDatabase {
  const database = `molo_${prefix.replace(/\W/g, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  psql(`CREATE DATABASE ${database}`);
  return {
    host: PG_HOST,
    port: PG_PORT,
    user: PG_USER,
    database,
    drop: () => {
      psql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`);
      psql(`DROP DATABASE IF EXISTS ${database}`);
    },
  };
}
