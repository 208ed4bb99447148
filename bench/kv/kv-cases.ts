/**
 * The KV cases: set and get of 64-byte values over 10,000 keys on each Molo backend (memory, SQLite
 * through its worker, Postgres through a pool of 4 pipelined connections) against Redis through
 * ioredis (one pipelined connection to the local server). Both sides keep 64 operations in flight.
 * - kv_<backend>_set: `n` writes, keys cycling;
 * - kv_<backend>_get: `n` reads of keys written when the contender opened.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { LRUCache } from 'lru-cache';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ActorSystem } from '../../src/actors/index.js';
import type { Database } from '../../src/data/database.js';
import { createMemoryKv, openKv, type KvStore } from '../../src/data/kv/index.js';
import { createPostgresPool } from '../../src/data/postgres.js';
import { openSqlite } from '../../src/data/sqlite/index.js';
import { concurrently, type Absent, type CaseSpec, type Contender } from '../data/rounds.js';
import type { BenchServer } from '../data/server.js';
import { closeRedis, connectRedis, type RedisConnection } from './redis.js';

export const KV_BACKEND_NAMES = ['memory', 'sqlite', 'postgres'] as const;
export type KvBackendName = (typeof KV_BACKEND_NAMES)[number];
export const KV_CASES = KV_BACKEND_NAMES.flatMap((backend) => [`kv_${backend}_set`, `kv_${backend}_get`]);

export interface KvSizes {
  readonly memory: number;
  readonly sql: number;
  readonly rounds: number;
}

const KEYS = 10_000;
const WINDOW = 64;
const VALUE = Buffer.alloc(64, 7);

export interface KvEnvironment {
  readonly system: ActorSystem;
  /** The Postgres database for kv_postgres_*; undefined: unavailable (`pgUnavailable` says why). */
  readonly pg: BenchServer | undefined;
  readonly pgUnavailable?: string;
}

interface OpenedStore {
  readonly store: KvStore;
  close(): Promise<void>;
}

async function openStore(backend: KvBackendName, env: KvEnvironment): Promise<OpenedStore> {
  if (backend === 'memory') {
    const store = createMemoryKv();
    return { store, close: () => store.close() };
  }
  let db: Database;
  let cleanup = async (): Promise<void> => undefined;
  if (backend === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'molo-bench-kv-'));
    process.stderr.write(`sqlite: files in ${dir}\n`);
    cleanup = () => rm(dir, { recursive: true, force: true });
    try {
      db = await openSqlite(env.system, { file: join(dir, 'kv.db') });
    } catch (error) {
      await cleanup();
      throw error;
    }
  } else {
    const { host, port, user, database } = env.pg!;
    db = await createPostgresPool(env.system, { host, port, user, database, min: 4, max: 4 });
  }
  const dispose = async (): Promise<void> => {
    await db.close();
    await cleanup();
  };
  try {
    // A fresh table per contender: a get case reads what its own open wrote.
    const store = await openKv(db, { table: `bench_kv_${Math.random().toString(36).slice(2, 10)}` });
    return {
      store,
      close: async () => {
        await store.close();
        await dispose();
      },
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** Writes the first min(count, 10,000) keys, 64 at a time. */
async function fill(count: number, set: (i: number) => Promise<unknown>): Promise<void> {
  await concurrently(Math.min(count, KEYS), WINDOW, async (i) => {
    await set(i);
    return 0;
  });
}

function moloContender(backend: KvBackendName, work: 'set' | 'get', env: KvEnvironment, keys: number): Contender {
  let opened: OpenedStore | undefined;
  const key = (i: number): string => `bench:${i % KEYS}`;
  return {
    impl: 'molo',
    open: async () => {
      opened = await openStore(backend, env);
      const store = opened.store;
      if (work === 'get') await fill(keys, (i) => store.set(key(i), VALUE));
    },
    run: (n) => {
      const store = opened!.store;
      return work === 'set'
        ? concurrently(n, WINDOW, async (i) => ((await store.set(key(i), VALUE)) > 0 ? 1 : 0))
        : concurrently(n, WINDOW, async (i) => ((await store.get(key(i % keys)))?.value.length === 64 ? 1 : 0));
    },
    close: async () => {
      const current = opened;
      opened = undefined;
      await current?.close();
    },
  };
}

async function redisContender(work: 'set' | 'get', keys: number): Promise<Contender | Absent> {
  const connected = await connectRedis();
  if ('unavailable' in connected) return { impl: 'redis', unavailable: connected.unavailable };
  const connection: RedisConnection = connected;
  const { client, prefix } = connection;
  process.stderr.write(`redis: keys under ${prefix}\n`);
  const key = (i: number): string => `${prefix}${i % KEYS}`;
  return {
    impl: 'redis',
    open: async () => {
      if (work === 'get') await fill(keys, (i) => client.set(key(i), VALUE));
    },
    run: (n) =>
      work === 'set'
        ? concurrently(n, WINDOW, async (i) => ((await client.set(key(i), VALUE)) === 'OK' ? 1 : 0))
        : concurrently(n, WINDOW, async (i) => ((await client.getBuffer(key(i % keys)))?.length === 64 ? 1 : 0)),
    close: () => closeRedis(connection, KEYS),
  };
}

/** The map-like part of `Map` and `LRUCache` an in-process peer needs. */
interface InProcessMap {
  set(key: string, value: Buffer): unknown;
  get(key: string): Buffer | undefined;
}

/**
 * In-process peers of the memory store: a `Map` and lru-cache (10,000 entries, no TTL), driven
 * through the same async lanes as Molo's store, so the harness costs both the same. Redis over TCP
 * is 10× behind any in-process store by construction; these say what the store itself costs.
 */
function inProcessContender(impl: string, create: () => InProcessMap, work: 'set' | 'get', keys: number): Contender {
  let map: InProcessMap | undefined;
  const key = (i: number): string => `bench:${i % KEYS}`;
  return {
    impl,
    open: async () => {
      const opened = create();
      map = opened;
      if (work === 'get') await fill(keys, async (i) => opened.set(key(i), VALUE));
    },
    run: (n) => {
      const m = map!;
      return work === 'set'
        ? concurrently(n, WINDOW, async (i) => (m.set(key(i), VALUE), 1))
        : concurrently(n, WINDOW, async (i) => (m.get(key(i % keys))?.length === 64 ? 1 : 0));
    },
    close: async () => void (map = undefined),
  };
}

export async function kvCases(env: KvEnvironment, sizes: KvSizes, selected: readonly string[]): Promise<CaseSpec[]> {
  const specs: CaseSpec[] = [];
  for (const backend of KV_BACKEND_NAMES) {
    for (const work of ['set', 'get'] as const) {
      const name = `kv_${backend}_${work}`;
      if (!selected.includes(name)) continue;
      const n = backend === 'memory' ? sizes.memory : sizes.sql;
      const keys = Math.min(n, KEYS);
      const molo: Contender | Absent =
        backend === 'postgres' && env.pg === undefined ? { impl: 'molo', unavailable: env.pgUnavailable ?? 'postgres unavailable' } : moloContender(backend, work, env, keys);
      const inProcess =
        backend === 'memory'
          ? [inProcessContender('map', () => new Map<string, Buffer>(), work, keys), inProcessContender('lru-cache', () => new LRUCache<string, Buffer>({ max: KEYS }), work, keys)]
          : [];
      specs.push({
        name,
        unit: `${work}s`,
        n,
        warmupN: Math.max(WINDOW, Math.round(n / 5)),
        rounds: sizes.rounds,
        expected: (count) => count,
        contenders: [molo, await redisContender(work, keys), ...inProcess],
      });
    }
  }
  return specs;
}
