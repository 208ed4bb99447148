/** examples/cluster/replicas.ts: two embedded replicas replicate notes and a KV key, catch up after a restart, settle a conflict. */
import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples/cluster/replicas.ts', () => {
  it('replicates, catches up after a restart and settles a concurrent KV write on the later one', async () => {
    const result = await runScript('examples/cluster/replicas.ts');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n').filter((line) => line !== '')).toEqual([
      'on b: "written on a"',
      'b back: caught up to 200 notes, lag 0',
      'motd on both after the heal: "from a, later"',
      'health problems on b: 0',
    ]);
  }, 60_000);
});
