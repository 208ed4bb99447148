/** examples/cluster/replicas.ts: two embedded replicas replicate, invalidate a cache, catch up after a restart, and settle a conflict under each policy. */
import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples/cluster/replicas.ts', () => {
  it('replicates, drops a cached view across nodes, catches up after a restart, and settles a conflict by each policy', async () => {
    const result = await runScript('examples/cluster/replicas.ts');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n').filter((line) => line !== '')).toEqual([
      'on b: "written on a"',
      "b's cached view of note 1 dropped by a's edit: true",
      'b back: caught up to 200 notes, lag 0',
      'kv (lww), later write wins: "from a, later"',
      'note 2 (optimistic), higher version wins: "b edits note 2 twice"',
      'theme (hook: longer text): "solarized"',
      'conflict log on b: kv:molo_kv/motd (lww), notes/2 (version), settings/theme (hook)',
      'health problems on b: 0',
    ]);
  }, 60_000);
});
