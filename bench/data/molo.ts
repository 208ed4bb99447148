/**
 * Molo's data entry points, loaded when the suite runs rather than imported statically: a missing
 * or broken entry point then costs its rows ("molo: not available: …"), not the whole suite and
 * not the peers' figures. The shapes below are what the suite uses of each.
 */
import type { ActorSystem } from '../../src/actors/index.js';
import type { DataContext } from '../../src/data/context.js';
import type { Database, QueryOptions } from '../../src/data/database.js';
import type { Result, Value } from '../../src/data/values.js';

export interface PgTarget {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
}

/** One Postgres connection, as `connectPostgres` hands it back. */
export interface MoloPgConnection {
  query(sql: string, params?: readonly Value[], ctx?: DataContext, options?: QueryOptions): Promise<Result>;
  close(): Promise<void>;
}

export type ConnectPostgres = (system: ActorSystem, options: PgTarget) => Promise<MoloPgConnection>;
export type CreatePostgresPool = (system: ActorSystem, options: PgTarget & { readonly min: number; readonly max: number }) => Database | Promise<Database>;
export type OpenSqlite = (system: ActorSystem, options: { readonly file: string }) => Database | Promise<Database>;

export interface MoloEntry<F> {
  readonly fn?: F;
  /** Why not, when `fn` is missing. */
  readonly unavailable?: string;
}

async function load<F>(module: string, name: string): Promise<MoloEntry<F>> {
  const url = new URL(module, import.meta.url).href;
  try {
    const exports = (await import(url)) as Record<string, unknown>;
    const fn = exports[name];
    if (typeof fn !== 'function') return { unavailable: `molo: not available (${name} is not exported by ${module})` };
    return { fn: fn as F };
  } catch (error) {
    const source = module.replace(/^(\.\.\/)+/, '').replace(/\.js$/, '.ts');
    const missing = (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(url.slice('file://'.length));
    const why = missing ? 'does not exist yet' : error instanceof Error ? error.message.split('\n')[0] : String(error);
    return { unavailable: `molo: not available (${source}: ${why})` };
  }
}

export const loadConnectPostgres = (): Promise<MoloEntry<ConnectPostgres>> => load('../../src/data/pg/index.js', 'connectPostgres');
export const loadCreatePostgresPool = (): Promise<MoloEntry<CreatePostgresPool>> => load('../../src/data/postgres.js', 'createPostgresPool');
export const loadOpenSqlite = (): Promise<MoloEntry<OpenSqlite>> => load('../../src/data/sqlite/index.js', 'openSqlite');

/**
 * Compile-time check that the entry points still have the shapes above: `npx tsc` fails when one
 * drifts, while a run still degrades to "not available" if a module is missing.
 */
type Conforms<Actual extends Expected, Expected> = [Actual, Expected];
export type EntryShapes = [
  Conforms<typeof import('../../src/data/pg/index.js').connectPostgres, ConnectPostgres>,
  Conforms<typeof import('../../src/data/postgres.js').createPostgresPool, CreatePostgresPool>,
  Conforms<typeof import('../../src/data/sqlite/index.js').openSqlite, OpenSqlite>,
];
