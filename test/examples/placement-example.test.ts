import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples/placement.ts', () => {
  it('runs an actor in a thread and one in a process, calls them, kills one and prints the exit signal', async () => {
    const result = await runScript('examples/placement.ts');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const mainPid = /main process: (\d+)/.exec(result.stdout)?.[1];
    expect(mainPid).toBeDefined();
    expect(result.stdout).toMatch(new RegExp(`squarer runs in: thread \\d+ of process ${mainPid}`));
    expect(result.stdout).toMatch(/tally runs in: process (\d+)/);
    expect(/tally runs in: process (\d+)/.exec(result.stdout)?.[1]).not.toBe(mainPid);
    expect(result.stdout).toContain('12 squared: 144');
    expect(result.stdout).toContain('tally: 6');
    expect(result.stdout).toContain('monitor saw the thread actor exit: killed');
    expect(result.stdout).toContain('guardian got EXIT from the process actor: {shutdown, {"process_exit":null,"signal":"SIGKILL"}}');
    expect(result.stdout).toContain('actors left: 0, hosts left: 0');
  });
});
