/**
 * The Redis peer: ioredis against the local server (127.0.0.1:6379, MOLO_REDIS_HOST/PORT override),
 * loaded when a case runs, so a missing package or server costs its rows ("unavailable: …"), not the
 * suite. Keys live under a per-run prefix and are deleted when the contender closes.
 */
import { randomBytes } from 'node:crypto';

export const REDIS_HOST = process.env.MOLO_REDIS_HOST ?? '127.0.0.1';
export const REDIS_PORT = Number(process.env.MOLO_REDIS_PORT ?? 6379);

/** What the suite uses of an ioredis client. */
export interface RedisClient {
  connect(): Promise<void>;
  set(key: string, value: Buffer): Promise<unknown>;
  getBuffer(key: string): Promise<Buffer | null>;
  del(...keys: string[]): Promise<number>;
  quit(): Promise<unknown>;
  disconnect(): void;
}

type RedisConstructor = new (options: Record<string, unknown>) => RedisClient;

export interface RedisConnection {
  readonly client: RedisClient;
  /** Keys of this run start with it. */
  readonly prefix: string;
}

/** Connects, or says why not. */
export async function connectRedis(): Promise<RedisConnection | { readonly unavailable: string }> {
  let Redis: RedisConstructor;
  try {
    Redis = ((await import('ioredis')) as unknown as { default: RedisConstructor }).default;
  } catch (error) {
    return { unavailable: `ioredis not installed: ${(error as Error).message}` };
  }
  // Fail fast rather than retry: an absent server makes the row unavailable, not the run hang.
  const client = new Redis({ host: REDIS_HOST, port: REDIS_PORT, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, enableOfflineQueue: false });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    return { unavailable: `redis unavailable at ${REDIS_HOST}:${REDIS_PORT}: ${(error as Error).message}` };
  }
  return { client, prefix: `molo-bench-kv:${randomBytes(4).toString('hex')}:` };
}

/** Deletes `count` keys `prefix0 … prefix<count-1>` and closes the connection. */
export async function closeRedis(connection: RedisConnection, count: number): Promise<void> {
  const { client, prefix } = connection;
  try {
    for (let start = 0; start < count; start += 1_000) {
      const keys = Array.from({ length: Math.min(1_000, count - start) }, (_, i) => `${prefix}${start + i}`);
      await client.del(...keys);
    }
  } finally {
    await client.quit().catch(() => client.disconnect());
  }
}
