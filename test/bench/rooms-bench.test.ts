import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { psql } from '../support/pg.js';
import { keepResults, ROOT, run, type ResultRow } from './smoke-support.js';

const RESULTS = keepResults('rooms');
const MOLOS = ['molo-postgres', 'molo-nats', 'molo-node', 'molo-socketio'];
const PEERS = ['socketio-redis', 'socketio-postgres'];

describe('npm run bench -- rooms (smoke)', () => {
  it('measures every system in both cases, writes rows with durability and ratios, and cleans up', { timeout: 90_000 }, async () => {
    const { stdout, stderr } = await run('npx', ['tsx', 'bench/run.ts', 'rooms', '--quick'], { cwd: ROOT, timeout: 85_000 });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];
    for (const name of ['fanout', 'cross_instance_latency']) {
      for (const impl of [...MOLOS, ...PEERS]) {
        const row = rows.find((candidate) => candidate.case === name && candidate.impl === impl);
        expect(row, `${name}/${impl}`).toBeDefined();
        expect(row!.ops_per_s, `${name}/${impl}: ${String(row!.error ?? row!.unavailable)}`).toBeGreaterThan(0);
        expect(row!.p50_ms as number).toBeGreaterThan(0);
        expect(row!.p99_ms as number).toBeGreaterThanOrEqual(row!.p50_ms as number);
        expect(row!.durability).toMatch(impl.startsWith('molo') ? /^durable/ : /^not durable/);
        expect(row!.mode).toBe('quick');
      }
      const ratio = rows.find((row) => row.case === name && row.impl === 'ratio');
      expect(typeof ratio?.['postgres_vs_socketio-redis'], `${name} ratio`).toBe('number');
      expect(typeof ratio?.['socketio_vs_socketio-postgres'], `${name} ratio`).toBe('number');
    }
    // Each fan-out delivery is counted once: N clients × the steady run's broadcasts.
    const fanout = rows.find((row) => row.case === 'fanout' && row.impl === 'molo-postgres')!;
    expect(fanout.steady_deliveries).toBe((fanout.clients as number) * (fanout.steady_messages as number));
    expect(stdout).toMatch(/synchronous_commit=\w+/);
    expect(stdout).toMatch(/appendonly=\w+/);
    expect(stdout).toMatch(/Ratios \(Molo ÷ peer/);
    const database = /database (molo_bench_[0-9a-f]+)/.exec(stderr)?.[1];
    expect(database).toBeDefined();
    expect(psql(`SELECT count(*) FROM pg_database WHERE datname = '${database!}'`)).toBe('0');
  });
});
