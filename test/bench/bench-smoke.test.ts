import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { keepResults, ROOT, run, type ResultRow } from './smoke-support.js';


const RESULTS = keepResults('actors');

describe('npm run bench -- actors (smoke)', () => {
  it('runs send and call quickly and writes Molo rows', { timeout: 60_000 }, async () => {
    const { stdout, stderr } = await run('npx', ['tsx', 'bench/run.ts', 'actors', '--quick', '--cases', 'send,call'], {
      cwd: ROOT,
      timeout: 55_000,
    });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];

    for (const name of ['send', 'call']) {
      const molo = rows.find((row) => row.case === name && row.impl === 'molo');
      expect(molo, `molo ${name} row`).toBeDefined();
      expect(molo!.ops_per_s).toBeGreaterThan(0);
      expect(molo!.mode).toBe('quick');
      const ratio = rows.find((row) => row.case === name && row.impl === 'ratio');
      expect(ratio, `${name} ratio row`).toBeDefined();
      expect(typeof ratio!['vs_xstate-callback']).toBe('number');
      expect(typeof ratio!['vs_xstate-machine']).toBe('number');
      expect(molo!.spread_pct, 'the spread of the rounds is reported').toEqual(expect.any(Number));
      expect(typeof ratio!.vs_raw).toBe('number');
    }
    expect(rows.some((row) => row.case === 'spawn')).toBe(false);

    // Erlang rows are measured when `erl` is there, and reported unavailable (not failed) when it is not.
    const erlang = rows.filter((row) => row.impl === 'erlang');
    expect(erlang).toHaveLength(2);
    const unavailable = erlang.every((row) => row.ops_per_s === null && typeof row.unavailable === 'string');
    if (unavailable) expect(stdout + stderr).toMatch(/Erlang rows unavailable/);
    else for (const row of erlang) {
      expect(row.ops_per_s).toBeGreaterThan(0);
      expect(row.vms, 'Erlang rows are the median of several VMs').toBeGreaterThanOrEqual(3);
    }

    expect(stdout).toMatch(/Ratios \(Molo ÷ peer\):/);
    expect(stdout).toMatch(/^send\s.*÷erlang/m);
  });

  it('measures send and call to thread- and process-placed actors, with bytes per message, peak RSS and the ratio to a local send', { timeout: 120_000 }, async () => {
    const { stdout } = await run('npx', ['tsx', 'bench/run.ts', 'actors', '--quick', '--cases', 'send,send_thread,send_process,call_process'], {
      cwd: ROOT,
      timeout: 115_000,
    });
    const rows = JSON.parse(await readFile(RESULTS, 'utf8')) as ResultRow[];
    for (const name of ['send_thread', 'send_process', 'call_process']) {
      const molo = rows.find((row) => row.case === name && row.impl === 'molo');
      expect(molo, `molo ${name} row`).toBeDefined();
      expect(molo!.ops_per_s).toBeGreaterThan(0);
      expect(molo!.bytes_per_msg).toBeGreaterThan(0);
      expect(molo!.peak_rss_mb).toBeGreaterThan(0);
      // Placement is Molo's own: no peer rows.
      expect(rows.filter((row) => row.case === name && row.impl !== 'molo' && row.impl !== 'ratio')).toEqual([]);
    }
    const ratio = (name: string) => rows.find((row) => row.case === name && row.impl === 'ratio');
    expect(typeof ratio('send_thread')!.vs_local).toBe('number');
    expect(typeof ratio('send_process')!.vs_local).toBe('number');
    // No local call was measured in this run.
    expect(ratio('call_process')!.vs_local).toBeNull();
    expect(stdout).toMatch(/^send_thread\s+ops\/s placed÷local send [\d.]+x .*bytes\/msg .*peak RSS/m);
  });

  it('lists the suites and exits 2 for an unknown suite', async () => {
    const failure = await run('npx', ['tsx', 'bench/run.ts', 'nope'], { cwd: ROOT }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toMatch(/suites:\n\s+actors/);
  });
});
