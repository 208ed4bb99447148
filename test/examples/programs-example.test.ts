import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples/programs.ts', () => {
  it('supervises two programs, survives a SIGKILL, prints status and stops cleanly by itself', async () => {
    const result = await runScript('examples/programs.ts');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/ticker +running +pid=\d+ health=unchecked restarts=0\/5 total=0/);
    expect(result.stdout).toMatch(/web +running +pid=\d+ health=healthy/);
    expect(result.stdout).toMatch(/\[web stdout\] listening on \d+/);
    expect(result.stdout).toMatch(/ticker restarted: pid (\d+) -> (?!\1)\d+/);
    expect(result.stdout).toMatch(/ticker +running +pid=\d+ health=unchecked restarts=1\/5 total=1 last exit=SIGKILL \(exit\)/);
    expect(result.stdout).toContain('stopped cleanly (supervisor exited with shutdown, 0 actors and 0 program processes left)');
  });
});
