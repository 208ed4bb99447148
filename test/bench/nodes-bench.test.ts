import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { keepResults, ROOT, run, type ResultRow } from './smoke-support.js';

const RESULTS = keepResults('nodes');

/** Erlang VMs of the suite still running (their node names carry `molo_nb_`). */
function strayErlangVms(): number {
  try {
    return execFileSync('pgrep', ['-f', 'molo_nb_'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

describe('npm run bench -- nodes (smoke)', () => {
  it('measures remote send and call on Molo and on two Erlang nodes, with ratios, and leaves no VM behind', { timeout: 90_000 }, async () => {
    const { stdout } = await run('npx', ['tsx', 'bench/run.ts', 'nodes', '--quick'], { cwd: ROOT, timeout: 85_000 });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];
    for (const name of ['remote_send', 'remote_call']) {
      const molo = rows.find((row) => row.case === name && row.impl === 'molo');
      expect(molo?.ops_per_s, `${name}/molo: ${String(molo?.error)}`).toBeGreaterThan(0);
      expect(molo?.bytes_per_msg).toBeGreaterThan(0);
      const erlang = rows.find((row) => row.case === name && row.impl === 'erlang');
      if (erlang?.ops_per_s === null) expect(erlang.unavailable).toMatch(/not runnable|failed/);
      else {
        expect(erlang?.ops_per_s, `${name}/erlang: ${String(erlang?.error)}`).toBeGreaterThan(0);
        expect(typeof rows.find((row) => row.case === name && row.impl === 'ratio')?.vs_erlang).toBe('number');
      }
    }
    expect(stdout).toMatch(/^remote_send\s+ops\/s molo÷erlang/m);
    expect(strayErlangVms()).toBe(0);
  });
});
