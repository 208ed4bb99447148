import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples run as programs', () => {
  it('actors.ts: kernel basics', async () => {
    const result = await runScript('examples/actors.ts');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('counter total: 5');
    expect(result.stdout).toContain('monitor saw: doomed on first message');
    expect(result.stdout).toContain('trapped exit: shutdown');
    expect(result.stdout).toContain('actors left: 0');
  });

  it('gen-server.ts: calls, casts, delayed reply, continue', async () => {
    const result = await runScript('examples/gen-server.ts');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('greeting: hello');
    expect(result.stdout).toContain('waited for answer: 42');
    expect(result.stdout).toContain('after clear: undefined');
    expect(result.stdout).toContain('stopped with: normal');
  });

  it('supervisor.ts: restarts, nested and dynamic supervisors', async () => {
    const result = await runScript('examples/supervisor.ts');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('root children: db(worker), pipeline(supervisor), pool(supervisor)');
    expect(result.stdout).toContain('db restarted with a new ref: true');
    expect(result.stdout).toContain('job-1: pong');
    expect(result.stdout).toContain('restarts in window: 1 remaining: 2');
    expect(result.stdout).toContain('actors left: 0');
  });

  it('demo.ts (npm start): prints the live tree, restarts the flaky child, stops cleanly', async () => {
    const result = await runScript('examples/demo.ts', { env: { MOLO_DEMO_MS: '4500' } });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/root \[one_for_one, \d+\/20 restarts left\]/);
    expect(result.stdout).toMatch(/squarer running restarts=0/);
    expect(result.stdout).toContain('! flaky crashed');
    expect(result.stdout).toMatch(/flaky running restarts=[1-9]/);
    expect(result.stdout).toContain('stopped cleanly (root exited with shutdown, 0 actors left)');
  });
});
