import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { keepResults, ROOT, run, type ResultRow } from './smoke-support.js';
import { psql } from '../support/pg.js';
import { REDIS_HOST, REDIS_PORT } from '../../bench/kv/redis.js';


const PEERS: Record<string, string> = {
  cache_hit: 'lru-cache',
  cache_compute_100: 'async-cache-dedupe',
  kv_memory_set: 'redis',
  kv_memory_get: 'redis',
  kv_sqlite_set: 'redis',
  kv_sqlite_get: 'redis',
  kv_postgres_set: 'redis',
  kv_postgres_get: 'redis',
};

const RESULTS = keepResults('kv');

/** Redis keys under `prefix` still on the server (null: no server to ask). */
async function redisKeys(prefix: string): Promise<number | null> {
  const client = new Redis({ host: REDIS_HOST, port: REDIS_PORT, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, enableOfflineQueue: false });
  try {
    await client.connect();
  } catch {
    client.disconnect();
    return null;
  }
  try {
    return (await client.keys(`${prefix}*`)).length;
  } finally {
    await client.quit();
  }
}

describe('npm run bench -- kv (smoke)', () => {
  it('measures Molo and its peer in every case, writes rows and ratios, and cleans up', { timeout: 90_000 }, async () => {
    const { stdout, stderr } = await run('npx', ['tsx', 'bench/run.ts', 'kv', '--quick'], { cwd: ROOT, timeout: 85_000 });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];

    for (const [name, peer] of Object.entries(PEERS)) {
      const molo = rows.find((row) => row.case === name && row.impl === 'molo');
      expect(molo?.ops_per_s, `${name}/molo: ${String(molo?.error ?? molo?.unavailable)}`).toBeGreaterThan(0);
      expect(molo!.mode).toBe('quick');
      const other = rows.find((row) => row.case === name && row.impl === peer);
      expect(other, `${name}/${peer} row`).toBeDefined();
      // Redis is the machine's server: when it is not running, its rows say so instead of failing.
      if (peer === 'redis' && other!.ops_per_s === null) expect(other!.unavailable).toMatch(/redis unavailable|ioredis not installed/);
      else {
        expect(other!.ops_per_s, `${name}/${peer}`).toBeGreaterThan(0);
        expect(typeof molo![`vs_${peer}`]).toBe('number');
      }
      const ratio = rows.find((row) => row.case === name && row.impl === 'ratio');
      expect(ratio, `${name} ratio row`).toBeDefined();
      expect(ratio![`vs_${peer}`]).toBe(molo![`vs_${peer}`] ?? null);
    }
    expect(rows.find((row) => row.case === 'cache_hit' && row.impl === 'ratio')?.target).toBe('vs_lru-cache >= 0.8');
    // The memory store also meets in-process peers, not only Redis over TCP.
    for (const name of ['kv_memory_set', 'kv_memory_get']) {
      for (const peer of ['map', 'lru-cache']) {
        expect(rows.find((row) => row.case === name && row.impl === peer)?.ops_per_s, `${name}/${peer}`).toBeGreaterThan(0);
        expect(typeof rows.find((row) => row.case === name && row.impl === 'ratio')?.[`vs_${peer}`]).toBe('number');
      }
    }
    // The topic rows: measured when bench/topics.ts is there, else "not available".
    const topic = rows.find((row) => row.case === 'topic_fanout' && row.impl === 'molo');
    if (existsSync(join(ROOT, 'bench', 'topics.ts'))) expect(topic?.ops_per_s, String(topic?.error ?? topic?.unavailable)).toBeGreaterThan(0);
    else expect(topic?.unavailable).toMatch(/^not available/);

    expect(stdout).toMatch(/Ratios \(Molo ÷ peer/);
    expect(stdout).toMatch(/^cache_hit\s+molo\s+÷lru-cache/m);

    // The suite drops its database, removes its SQLite files and deletes its Redis keys.
    const database = /database (molo_bench_[0-9a-f]+)/.exec(stderr)?.[1];
    expect(database).toBeDefined();
    expect(psql(`SELECT count(*) FROM pg_database WHERE datname = '${database!}'`)).toBe('0');
    const dirs = [...stderr.matchAll(/sqlite: files in (\S+)/g)].map((match) => match[1]!);
    expect(dirs.length).toBeGreaterThan(0);
    for (const dir of dirs) expect(existsSync(dir), dir).toBe(false);
    for (const [, prefix] of stderr.matchAll(/redis: keys under (\S+)/g)) {
      const left = await redisKeys(prefix!);
      if (left !== null) expect(left, prefix).toBe(0);
    }
  });

  it('runs only the cases asked for', { timeout: 30_000 }, async () => {
    await run('npx', ['tsx', 'bench/run.ts', 'kv', '--quick', '--cases', 'cache_hit'], { cwd: ROOT, timeout: 25_000 });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];
    expect(new Set(rows.map((row) => row.case))).toEqual(new Set(['cache_hit']));
  });
});
