import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keepResults, ROOT, run, type ResultRow } from './smoke-support.js';
import { psql } from '../support/pg.js';


const CASES = ['pg_sequential', 'pg_pool', 'pg_one_conn', 'pg_fetch', 'sqlite_insert', 'sqlite_select'];
const PEERS: Record<string, string[]> = {
  pg_sequential: ['postgres.js', 'pg', 'pg-pipeline'],
  pg_pool: ['postgres.js', 'pg', 'pg-pipeline'],
  pg_one_conn: ['postgres.js', 'pg', 'pg-pipeline'],
  pg_fetch: ['postgres.js', 'pg'],
  sqlite_insert: ['better-sqlite3'],
  sqlite_select: ['better-sqlite3'],
};
/** Which Molo entry point each case needs: once it exists, its rows must be measured, not "not available". */
const ENTRY: Record<string, string> = {
  pg_sequential: 'src/data/pg/index.ts',
  pg_pool: 'src/data/postgres.ts',
  pg_one_conn: 'src/data/pg/index.ts',
  pg_fetch: 'src/data/pg/index.ts',
  sqlite_insert: 'src/data/sqlite/index.ts',
  sqlite_select: 'src/data/sqlite/index.ts',
};

const RESULTS = keepResults('data');

describe('npm run bench -- data (smoke)', () => {
  it('measures every case side by side, writes rows and ratios, and cleans up', { timeout: 60_000 }, async () => {
    const { stdout, stderr } = await run('npx', ['tsx', 'bench/run.ts', 'data', '--quick'], { cwd: ROOT, timeout: 55_000 });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];

    for (const name of CASES) {
      for (const peer of PEERS[name]!) {
        const row = rows.find((candidate) => candidate.case === name && candidate.impl === peer);
        expect(row?.ops_per_s, `${name}/${peer}`).toBeGreaterThan(0);
        expect(row!.mode).toBe('quick');
      }
      const molo = rows.find((row) => row.case === name && row.impl === 'molo');
      const ratio = rows.find((row) => row.case === name && row.impl === 'ratio');
      expect(ratio, `${name} ratio row`).toBeDefined();
      expect(typeof ratio!.best_peer).toBe('string');
      if (existsSync(join(ROOT, ENTRY[name]!))) {
        expect(molo?.ops_per_s, `${name}/molo: ${String(molo?.error ?? molo?.unavailable)}`).toBeGreaterThan(0);
        expect(typeof molo!.vs_best_peer).toBe('number');
        expect(ratio!.vs_best_peer).toBe(molo!.vs_best_peer);
      } else {
        expect(molo?.unavailable).toMatch(/^molo: not available/);
      }
    }
    expect(stdout).toMatch(/Ratios \(Molo ÷ peer/);
    expect(stdout).toMatch(/^pg_one_conn\s+molo÷best peer/m);

    // The suite drops its database and removes its SQLite files.
    const database = /database (molo_bench_[0-9a-f]+)/.exec(stderr)?.[1];
    expect(database).toBeDefined();
    expect(psql(`SELECT count(*) FROM pg_database WHERE datname = '${database!}'`)).toBe('0');
    const dir = /sqlite: files in (\S+)/.exec(stderr)?.[1];
    expect(dir).toBeDefined();
    expect(existsSync(dir!)).toBe(false);
  });

  it('runs only the cases asked for', { timeout: 30_000 }, async () => {
    await run('npx', ['tsx', 'bench/run.ts', 'data', '--quick', '--cases', 'sqlite_select'], { cwd: ROOT, timeout: 25_000 });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];
    expect(new Set(rows.map((row) => row.case))).toEqual(new Set(['sqlite_select']));
  });
});
