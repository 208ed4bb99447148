import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { psql } from '../support/pg.js';
import { keepResults, ROOT, run, type ResultRow } from './smoke-support.js';

const RESULTS = keepResults('tasks');
const PEERS = ['bullmq', 'pg-boss', 'graphile-worker'];

describe('npm run bench -- tasks (smoke)', () => {
  it('measures every peer in every case, writes rows, latency percentiles and ratios, and cleans up', { timeout: 300_000 }, async () => {
    const { stdout, stderr } = await run('npx', ['tsx', 'bench/run.ts', 'tasks', '--quick'], { cwd: ROOT, timeout: 290_000 });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];
    const impls = [...new Set(rows.map((row) => row.impl).filter((impl) => impl !== 'ratio'))];
    expect(impls).toEqual(expect.arrayContaining(PEERS));
    for (const impl of impls) {
      for (const name of ['end_to_end', 'process', 'enqueue', 'enqueue_single', 'first_to_last', 'latency']) {
        const row = rows.find((candidate) => candidate.case === name && candidate.impl === impl);
        expect(row, `${name}/${impl}`).toBeDefined();
        expect(row!.mode).toBe('quick');
        // Peers are the machine's servers: when one is not running, its rows say so instead of failing.
        if (!impl.startsWith('molo') && row!.unavailable !== undefined) {
          expect(row!.unavailable).toMatch(/unavailable/);
          continue;
        }
        expect(row!.error, `${name}/${impl}`).toBeUndefined();
        if (name === 'latency') {
          expect(row!.p50_ms, impl).toBeGreaterThan(0);
          expect(row!.p99_ms as number, impl).toBeGreaterThanOrEqual(row!.p50_ms as number);
        } else {
          expect(row!.ops_per_s, `${name}/${impl}`).toBeGreaterThan(0);
          // Start-up and shutdown are timed apart, beside the figure.
          expect(row!.startup_ms, `${name}/${impl}`).toBeGreaterThanOrEqual(0);
          expect(row!.shutdown_ms, `${name}/${impl}`).toBeGreaterThanOrEqual(0);
        }
        // Every figure names the durability its store ran with, read from the server.
        expect(String(row!.durability), impl).toMatch(impl.startsWith('molo-sqlite') ? /^sqlite synchronous=full/ : impl === 'bullmq' ? /^redis appendonly=\w+ appendfsync=\w+ save=/ : /^postgres synchronous_commit=\w+ fsync=\w+/);
      }
      const firstToLast = rows.find((candidate) => candidate.case === 'first_to_last' && candidate.impl === impl);
      if (firstToLast?.unavailable === undefined) expect(firstToLast!.until_last_ms, impl).toBeGreaterThan(0);
    }
    const ratio = rows.find((row) => row.case === 'end_to_end' && row.impl === 'ratio');
    expect(ratio?.targets).toEqual(['postgres-loop_vs_bullmq >= 1', 'sqlite-loop_vs_bullmq >= 2']);
    const processing = rows.find((row) => row.case === 'process' && row.impl === 'ratio');
    expect(processing?.targets).toEqual(['postgres-loop_vs_bullmq >= 1', 'postgres-loop_vs_graphile-worker >= 1', 'sqlite-loop_vs_bullmq >= 1.5']);
    expect(stdout).toMatch(/a completion counts at/);
    expect(stdout).toMatch(/Ratios \(Molo ÷ peer/);
    expect(stdout).toMatch(/Idle-queue latency/);
    const database = /database (molo_bench_[0-9a-f]+)/.exec(stderr)?.[1];
    expect(database).toBeDefined();
    expect(psql(`SELECT count(*) FROM pg_database WHERE datname = '${database!}'`)).toBe('0');
  });
});
