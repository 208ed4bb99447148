/**
 * The test run on a machine without the usual Postgres: the global setup, run in a child process
 * with MOLO_PG_PORT pointed at a closed port, either starts a throwaway server (initdb/pg_ctl) that
 * answers where it says, or (throwaway forbidden) fails within a second with one message that says
 * what to start.
 */
import { execFile } from 'node:child_process';
import { freePort } from './ports.js';
import { describe, expect, it } from 'vitest';
import { projectRoot } from './run-script.js';


/** Runs setup() (and teardown() after a psql probe of what it exported) in a fresh process; prints one JSON line. */
const SCRIPT = `
import { execFileSync } from 'node:child_process';
import { setup, teardown } from './test/support/global-setup.ts';
const started = performance.now();
try {
  await setup();
  const env = { host: process.env.MOLO_PG_HOST, port: process.env.MOLO_PG_PORT, user: process.env.MOLO_PG_USER };
  const answer = execFileSync('psql', ['-X', '-w', '-h', env.host, '-p', env.port, '-U', env.user, '-d', 'postgres', '-Atqc', 'SELECT 41 + 1'], { encoding: 'utf8' }).trim();
  await teardown();
  console.log(JSON.stringify({ ok: true, env, answer }));
} catch (error) {
  console.log(JSON.stringify({ ok: false, ms: performance.now() - started, message: error.message }));
}
`;

interface Outcome {
  readonly ok: boolean;
  readonly env?: { host: string; port: string; user: string };
  readonly answer?: string;
  readonly ms?: number;
  readonly message?: string;
}

function runSetup(env: NodeJS.ProcessEnv): Promise<{ outcome: Outcome; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', SCRIPT],
      { cwd: projectRoot, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`setup child failed: ${error.message}\n${stderr}`));
        else resolve({ outcome: JSON.parse(stdout.trim().split('\n').pop()!) as Outcome, stderr });
      },
    );
  });
}

describe('the test setup on a machine without Postgres on MOLO_PG_PORT', () => {
  it('starts a throwaway server, exports where it is, and removes it at teardown', async () => {
    const port = await freePort();
    const { outcome, stderr } = await runSetup({ MOLO_PG_HOST: '127.0.0.1', MOLO_PG_PORT: String(port), MOLO_PG_USER: 'postgres', MOLO_PG_NO_THROWAWAY: '' });
    expect(outcome, stderr).toMatchObject({ ok: true, answer: '42', env: { host: '127.0.0.1', user: 'postgres' } });
    expect(Number(outcome.env!.port)).not.toBe(port);
    expect(stderr).toContain(`no Postgres on 127.0.0.1:${port}`);
    // Gone after teardown: the port it served no longer answers.
    await expect(runSetup({ MOLO_PG_HOST: '127.0.0.1', MOLO_PG_PORT: outcome.env!.port, MOLO_PG_NO_THROWAWAY: '1' })).resolves.toMatchObject({ outcome: { ok: false } });
  }, 60_000);

  it('fails within a second with one message saying what to start when no throwaway may be started', async () => {
    const port = await freePort();
    const { outcome } = await runSetup({ MOLO_PG_HOST: '127.0.0.1', MOLO_PG_PORT: String(port), MOLO_PG_USER: 'postgres', MOLO_PG_NO_THROWAWAY: '1' });
    expect(outcome.ok).toBe(false);
    expect(outcome.ms).toBeLessThan(1_000);
    expect(outcome.message).toContain(`nothing answers as user 'postgres' on 127.0.0.1:${port}`);
    expect(outcome.message).toMatch(/Start one with trust auth, e\.g\. `docker run .*postgres/);
    expect(outcome.message!.split('\n')).toHaveLength(1);
  }, 60_000);
});
