import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { psql } from '../support/pg.js';
import { keepResults, ROOT, run, type ResultRow } from './smoke-support.js';

const RESULTS = keepResults('streams');
const IMPLS = ['molo-sqlite', 'molo-postgres', 'jetstream', 'redis'];

describe('npm run bench -- streams (smoke)', () => {
  it('measures every system in every case, writes rows, ratios and retained bytes, and cleans up', { timeout: 600_000 }, async () => {
    const { stdout, stderr } = await run('npx', ['tsx', 'bench/run.ts', 'streams', '--quick'], { cwd: ROOT, timeout: 590_000 });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];
    for (const name of ['publish', 'consume_ack', 'end_to_end']) {
      for (const impl of IMPLS) {
        const row = rows.find((candidate) => candidate.case === name && candidate.impl === impl);
        expect(row, `${name}/${impl}`).toBeDefined();
        // Peers are the machine's servers: when one is not running, its rows say so instead of failing.
        if (impl.startsWith('molo') || row!.unavailable === undefined) expect(row!.ops_per_s, `${name}/${impl}: ${String(row!.error ?? row!.unavailable)}`).toBeGreaterThan(0);
        else expect(row!.unavailable).toMatch(/unavailable/);
        expect(row!.mode).toBe('quick');
      }
      const ratio = rows.find((row) => row.case === name && row.impl === 'ratio');
      expect(ratio, `${name} ratio`).toBeDefined();
      expect(Object.keys(ratio!)).toEqual(expect.arrayContaining(['sqlite_vs_jetstream', 'sqlite_vs_redis', 'postgres_vs_jetstream', 'postgres_vs_redis']));
    }
    expect(rows.find((row) => row.case === 'end_to_end' && row.impl === 'ratio')?.targets).toEqual(['sqlite_vs_jetstream >= 2', 'sqlite_vs_redis >= 0.5', 'postgres_vs_jetstream >= 1']);
    for (const impl of ['molo-sqlite', 'molo-postgres']) {
      expect(rows.find((row) => row.case === 'retained' && row.impl === impl)?.bytes_per_million_msgs, impl).toBeGreaterThan(1_000_000_000);
    }
    expect(stdout).toMatch(/Ratios \(Molo ÷ peer/);
    expect(stdout).toMatch(/bytes per 1M retained msgs/);
    const database = /database (molo_bench_[0-9a-f]+)/.exec(stderr)?.[1];
    expect(database).toBeDefined();
    expect(psql(`SELECT count(*) FROM pg_database WHERE datname = '${database!}'`)).toBe('0');
  });
});
