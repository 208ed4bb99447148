import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot, runScript, TS_NODE_ARGS } from '../support/run-script.js';

describe('examples can be copied into an app', () => {
  it("import only the package's public entries (never ../src), node builtins, dependencies and each other", () => {
    const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { exports: Record<string, unknown>; dependencies: Record<string, string> };
    const entries = Object.keys(pkg.exports).map((key) => (key === '.' ? 'molo' : `molo/${key.slice(2)}`));
    const allowed = (specifier: string): boolean =>
      entries.includes(specifier) || specifier.startsWith('node:') || specifier in pkg.dependencies || /^\.\/[\w-]+\.js$/.test(specifier);
    const dir = join(projectRoot, 'examples');
    // The top-level programs, and the modules of the getting-started app (the tutorial's code).
    const files = [
      ...readdirSync(dir).filter((name) => name.endsWith('.ts')),
      ...readdirSync(join(dir, 'getting-started')).filter((name) => name.endsWith('.ts')).map((name) => `getting-started/${name}`),
    ];
    expect(files).toContain('getting-started/app.ts');
    const refused: string[] = [];
    for (const file of files) {
      for (const match of readFileSync(join(dir, file), 'utf8').matchAll(/\bfrom '([^']+)'/g)) if (!allowed(match[1]!)) refused.push(`${file}: ${match[1]}`);
    }
    expect(refused).toEqual([]);
  });
});

describe('examples run as programs', () => {
  it('actors.ts: kernel basics', async () => {
    const result = await runScript('examples/actors.ts');
    // The one crash the example provokes is reported (pino JSON on stderr), as OTP prints crash reports.
    const reports = result.stderr.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { event: string; reason: string });
    expect(reports).toMatchObject([{ event: 'actor.crashed', reason: 'Error: doomed on first message' }]);
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

  it('demo.ts (npm start): prints the live tree, restarts the flaky child, supervises a program, stops cleanly', async () => {
    const result = await runScript('examples/demo.ts', { env: { MOLO_DEMO_MS: '4500', MOLO_ADMIN_PORT: '0' } });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Admin: http:\/\/127\.0\.0\.1:\d+\/tree/);
    expect(result.stdout).toMatch(/root \(supervisor Supervisor one_for_one\)\s+running/);
    expect(result.stdout).toMatch(/squarer \(worker Squarer\)\s+running\s+restarts 0/);
    expect(result.stdout).toContain('! flaky crashed');
    expect(result.stdout).toMatch(/flaky \(worker Flaky\)\s+running\s+restarts [1-9]/);
    expect(result.stdout).toMatch(/heartbeat\s+running\s+pid \d+/);
    expect(result.stdout).toContain('[heartbeat] beat 1');
    expect(result.stdout).toMatch(/stopped cleanly in \d+ ms \(0 actors left\)/);
  });

  it('demo.ts stops cleanly on Ctrl-C (SIGINT) and exits 0', async () => {
    const child = spawn(process.execPath, [...TS_NODE_ARGS, 'examples/demo.ts'], {
      cwd: projectRoot,
      env: { ...process.env, MOLO_ADMIN_PORT: '0' },
    });
    let stdout = '';
    let interrupted = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!interrupted && stdout.includes('-- last square')) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
    expect(code).toBe(0);
    expect(stdout).toMatch(/stopped cleanly in \d+ ms/);
    expect(stdout).toContain("[heartbeat] stopped: 'heartbeat'");
  });
});
