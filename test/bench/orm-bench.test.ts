/**
 * `npm run bench -- orm --quick`: every case measured for Molo's ORM, Molo's raw client and
 * drizzle-orm on both backends, ratio rows written, and the suite's database and files cleaned up.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { keepResults, ROOT, run, type ResultRow } from './smoke-support.js';
import { psql } from '../support/pg.js';


const CASES = ['pg_insert', 'pg_select_pk', 'pg_pages', 'pg_eager', 'sqlite_insert', 'sqlite_select_pk', 'sqlite_pages', 'sqlite_eager'];
/** Cases measured the way a request handler calls, and the bulk insert; drizzle-prepared runs the awaited ones. */
const USER_CASES = ['pg_insert_awaited', 'pg_select_pk_awaited', 'pg_bulk_insert', 'sqlite_insert_awaited', 'sqlite_select_pk_awaited', 'sqlite_bulk_insert'];

const RESULTS = keepResults('orm');

describe('npm run bench -- orm (smoke)', () => {
  it('measures every case for molo, molo-raw and drizzle, writes ratios, cleans up', { timeout: 240_000 }, async () => {
    // About 27 s on a quiet machine (most of it opening connections and SQLite threads per pair; quick runs open no reader threads).
    const { stdout, stderr } = await run('npx', ['tsx', 'bench/run.ts', 'orm', '--quick'], { cwd: ROOT, timeout: 235_000 });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];
    for (const name of CASES) {
      for (const impl of ['molo', 'molo-raw', 'drizzle']) {
        const row = rows.find((candidate) => candidate.case === name && candidate.impl === impl);
        expect(row?.ops_per_s, `${name}/${impl}: ${String(row?.error ?? row?.unavailable)}`).toBeGreaterThan(0);
        expect(row!.mode).toBe('quick');
      }
      const ratio = rows.find((row) => row.case === name && row.impl === 'ratio');
      expect(typeof ratio?.vs_drizzle, `${name} ratio`).toBe('number');
      expect(typeof ratio?.orm_overhead).toBe('number');
    }
    for (const name of USER_CASES) {
      const impls = name.endsWith('_awaited') ? ['molo', 'molo-raw', 'drizzle', 'drizzle-prepared'] : ['molo', 'molo-raw', 'drizzle'];
      for (const impl of impls) {
        const row = rows.find((candidate) => candidate.case === name && candidate.impl === impl);
        expect(row?.ops_per_s, `${name}/${impl}: ${String(row?.error ?? row?.unavailable)}`).toBeGreaterThan(0);
      }
    }
    expect(stdout).toMatch(/molo÷drizzle/);
    expect(stdout).toMatch(/^pg_eager\s+molo÷drizzle/m);

    const database = /database (molo_bench_[0-9a-f]+)/.exec(stderr)?.[1];
    expect(database).toBeDefined();
    expect(psql(`SELECT count(*) FROM pg_database WHERE datname = '${database!}'`)).toBe('0');
    const dir = /sqlite: files in (\S+)/.exec(stderr)?.[1];
    expect(dir).toBeDefined();
    expect(existsSync(dir!)).toBe(false);
  });

  it('runs only the cases asked for', { timeout: 60_000 }, async () => {
    await run('npx', ['tsx', 'bench/run.ts', 'orm', '--quick', '--cases', 'sqlite_select_pk'], { cwd: ROOT, timeout: 55_000 });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];
    expect(new Set(rows.map((row) => row.case))).toEqual(new Set(['sqlite_select_pk']));
    // The overhead comes from paired rounds, the separate medians' quotient kept beside it.
    const ratio = rows.find((row) => row.impl === 'ratio');
    expect(ratio?.orm_overhead_method).toBe('paired');
    expect(ratio?.orm_overhead_pairs).toBe(2);
    expect(typeof ratio?.orm_overhead).toBe('number');
    expect(ratio?.orm_overhead_separate === null || typeof ratio?.orm_overhead_separate === 'number').toBe(true);
  });
});
