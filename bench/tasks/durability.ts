/**
 * Each system's durability setting, read from its server where it can be, so a figure is never
 * printed without what an acknowledged enqueue or completion promised: Redis persistence
 * (appendonly/appendfsync/save), Postgres `synchronous_commit` and `fsync`, SQLite `synchronous`.
 */
import pg from 'pg';
import type { BenchServer } from '../data/server.js';
import { REDIS_HOST, REDIS_PORT } from '../kv/redis.js';
import { messageOf } from '../suite.js';

export async function postgresDurability(server: BenchServer): Promise<string> {
  const client = new pg.Client({ host: server.host, port: server.port, user: server.user, database: server.database, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    const setting = async (name: string): Promise<string> => String((await client.query(`SELECT current_setting('${name}') AS value`)).rows[0].value);
    return `postgres synchronous_commit=${await setting('synchronous_commit')} fsync=${await setting('fsync')}`;
  } catch (error) {
    return `postgres: not read (${messageOf(error)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

interface ConfigClient {
  config(op: 'GET', key: string): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
}

export async function redisDurability(): Promise<string> {
  const Redis = ((await import('ioredis')) as unknown as { default: new (options: Record<string, unknown>) => ConfigClient }).default;
  const client = new Redis({ host: REDIS_HOST, port: REDIS_PORT, maxRetriesPerRequest: 1, retryStrategy: () => null });
  try {
    const get = async (key: string): Promise<string> => {
      const reply = (await client.config('GET', key)) as string[];
      return reply[1] === '' ? '""' : String(reply[1]);
    };
    return `redis appendonly=${await get('appendonly')} appendfsync=${await get('appendfsync')} save=${await get('save')}`;
  } catch (error) {
    return `redis: not read (${messageOf(error)})`;
  } finally {
    await client.quit().catch(() => client.disconnect());
  }
}
