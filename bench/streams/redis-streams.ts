/**
 * Redis Streams as a contender (ioredis against 127.0.0.1:6379, MOLO_REDIS_HOST/PORT override):
 * XADD pipelined PUBLISH_WINDOW at a time, XREADGROUP of FETCH_BATCH, and one XACK per batch read.
 * Everything in memory (no AOF fsync on this server), as the peer is usually run.
 */
import { randomBytes } from 'node:crypto';
import { REDIS_HOST, REDIS_PORT } from '../kv/redis.js';
import { FETCH_BATCH, PUBLISH_WINDOW, type StreamContender } from './contender.js';

interface Pipeline {
  xadd(key: string, id: string, field: string, value: Buffer): Pipeline;
  exec(): Promise<unknown>;
}

interface Client {
  connect(): Promise<void>;
  pipeline(): Pipeline;
  xgroup(...args: (string | number)[]): Promise<unknown>;
  xreadgroupBuffer(...args: (string | number)[]): Promise<[Buffer, [Buffer, Buffer[]][]][] | null>;
  xack(key: string, group: string, ...ids: Buffer[]): Promise<number>;
  del(...keys: string[]): Promise<number>;
  memory(sub: 'USAGE', key: string, ...args: (string | number)[]): Promise<number | null>;
  quit(): Promise<unknown>;
  disconnect(): void;
}

export function redisStreamsContender(): StreamContender {
  let client: Client | undefined;
  const run = randomBytes(4).toString('hex');
  let round = 0;
  let key = '';
  const keys: string[] = [];

  const publishLoop = async (n: number, payload: Buffer): Promise<void> => {
    for (let i = 0; i < n; i += PUBLISH_WINDOW) {
      const pipeline = client!.pipeline();
      for (let k = 0; k < Math.min(PUBLISH_WINDOW, n - i); k++) pipeline.xadd(key, '*', 'p', payload);
      await pipeline.exec();
    }
  };

  const consumeLoop = async (n: number): Promise<number> => {
    let seen = 0;
    while (seen < n) {
      const reply = await client!.xreadgroupBuffer('GROUP', 'g', 'c', 'COUNT', FETCH_BATCH, 'BLOCK', 1_000, 'STREAMS', key, '>');
      if (reply === null) continue;
      const ids = reply[0]![1].map(([id]) => id);
      seen += ids.length;
      await client!.xack(key, 'g', ...ids);
    }
    return seen;
  };

  return {
    impl: 'redis',
    async open() {
      const Redis = ((await import('ioredis')) as unknown as { default: new (options: Record<string, unknown>) => Client }).default;
      client = new Redis({ host: REDIS_HOST, port: REDIS_PORT, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, enableOfflineQueue: false });
      try {
        await client.connect();
      } catch (error) {
        client.disconnect();
        client = undefined;
        throw error;
      }
    },
    async reset() {
      key = `molo-bench-streams:${run}:${++round}`;
      keys.push(key);
      await client!.xgroup('CREATE', key, 'g', '0', 'MKSTREAM');
    },
    publish: publishLoop,
    consume: consumeLoop,
    async endToEnd(n, payload) {
      // A second connection: XREADGROUP ... BLOCK holds its connection.
      const Redis = ((await import('ioredis')) as unknown as { default: new (options: Record<string, unknown>) => Client }).default;
      const publisher = new Redis({ host: REDIS_HOST, port: REDIS_PORT, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
      await publisher.connect();
      try {
        const publish = async (): Promise<void> => {
          for (let i = 0; i < n; i += PUBLISH_WINDOW) {
            const pipeline = publisher.pipeline();
            for (let k = 0; k < Math.min(PUBLISH_WINDOW, n - i); k++) pipeline.xadd(key, '*', 'p', payload);
            await pipeline.exec();
          }
        };
        const [, seen] = await Promise.all([publish(), consumeLoop(n)]);
        return seen;
      } finally {
        await publisher.quit();
      }
    },
    async retainedBytes() {
      const bytes = await client!.memory('USAGE', key, 'SAMPLES', 0);
      return bytes === null ? null : { bytes, where: 'memory (MEMORY USAGE of the stream key)' };
    },
    async close() {
      if (client === undefined) return;
      for (let i = 0; i < keys.length; i += 100) await client.del(...keys.slice(i, i + 100)).catch(() => undefined);
      await client.quit().catch(() => client!.disconnect());
    },
  };
}
