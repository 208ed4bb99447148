/**
 * `molo tasks` against a real node's admin surface over a real task queue (SQLite): the `molo`
 * process itself for enqueueing a file (progress on stderr) and status, and runTasksCli in this
 * process (the same code, over real HTTP) for the rest of the commands.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlTaskQueue } from '../../src/bus/index.js';
import { runTasksCli, TASKS_USAGE } from '../../src/cli/tasks.js';
import { TASK_BACKENDS } from '../bus/tasks/stores.js';
import { runMolo, startTestNode } from './helpers.js';

const sqlite = TASK_BACKENDS.find((backend) => backend.name === 'sqlite')!;
const TOKEN = 'tasks-cli-token-0123456789';

async function cli(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runTasksCli(argv, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), env });
  return { code, stdout, stderr };
}

describe('molo tasks', () => {
  let queue: SqlTaskQueue;
  let dir: string;
  beforeAll(async () => {
    await sqlite.setup();
    queue = await sqlite.open();
    await queue.createQueue('jobs');
    dir = mkdtempSync(join(tmpdir(), 'molo-tasks-cli-'));
  }, 30_000);
  afterAll(async () => {
    await queue.close();
    await sqlite.teardown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the molo process enqueues a JSON-lines file with progress on stderr, then prints a task status', async () => {
    const { node } = await startTestNode({ root: { children: [] }, admin: { port: 0, token: TOKEN, tasks: queue } });
    const file = join(dir, 'tasks.jsonl');
    const lines = Array.from({ length: 250 }, (_, n) => JSON.stringify({ name: 'resize', payload: { n }, ...(n === 7 ? { idempotencyKey: 'seven' } : {}) }));
    writeFileSync(file, `${lines.join('\n')}\n\n${JSON.stringify({ name: 'resize', idempotencyKey: 'seven' })}\n`);
    const env = { MOLO_ADMIN_URL: node.adminUrl!, MOLO_ADMIN_TOKEN: TOKEN };
    const run = await runMolo(['tasks', 'enqueue', 'jobs', '--file', file, '--batch', '100'], env);
    expect(run.stderr.trimEnd().split('\n')).toEqual(['enqueued 100/251', 'enqueued 200/251', 'enqueued 251/251 (1 duplicates)']);
    expect(run.stdout).toBe('251 tasks enqueued (1 duplicates)\n');
    expect(run.code).toBe(0);
    expect((await queue.queueInfo('jobs')).depth).toBe(250);
    const [first] = await queue.list('jobs', { limit: 1 });
    const status = await runMolo(['tasks', 'status', first!.envelope.id], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toBe(`${first!.envelope.id}  jobs  resize  queued  attempts 0/6  priority 0\n`);
    // Without the token, the 401 names the variable to set.
    const refused = await runMolo(['tasks', 'list'], { MOLO_ADMIN_URL: node.adminUrl! });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/HTTP 401.*ADMIN_UNAUTHORIZED.*set MOLO_ADMIN_TOKEN/);
    await node.stop();
  }, 120_000);

  it('list, inspect, enqueue, cancel, retry, dlq and redrive over the admin surface', async () => {
    const { node } = await startTestNode({ root: { children: [] }, admin: { port: 0, token: TOKEN, tasks: queue } });
    await queue.createQueue('mail');
    const env = { MOLO_ADMIN_URL: node.adminUrl!, MOLO_ADMIN_TOKEN: TOKEN };
    const enqueued = await cli(['enqueue', 'mail', 'send', '--payload', '{"to":"a@example.com"}', '--priority', '3', '--max-retries', '0'], env);
    expect(enqueued.code).toBe(0);
    const id = enqueued.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const queues = await cli(['list'], env);
    expect(queues.stdout).toContain('mail  depth 1  dead letters 0  (queued 1)');
    expect((await cli(['list', 'mail', '--state', 'queued'], env)).stdout).toBe(`${id}  mail  send  queued  attempts 0/1  priority 3\n`);
    const inspect = await cli(['inspect', id], env);
    expect(inspect.stdout).toContain('payload {"to":"a@example.com"}');
    expect(inspect.stdout).toMatch(/history:\n {4}\d{4}-.*Z {2}queued/);
    const json = JSON.parse((await cli(['status', id, '--json'], env)).stdout) as { state: string };
    expect(json.state).toBe('queued');

    const [leased] = await queue.lease('mail', 1);
    await queue.settle('mail', [{ id, leaseToken: leased!.leaseToken, outcome: { kind: 'failed', reason: 'error', detail: 'smtp down' } }]);
    expect((await cli(['dlq', 'mail'], env)).stdout).toMatch(new RegExp(`^${id}  send  max-retries  .*  attempts 1/1  .*smtp down`));
    expect((await cli(['redrive', 'mail'], env)).stdout).toBe('1 redriven\n');
    expect((await cli(['cancel', id], env)).stdout).toBe(`${id}  cancelled\n`);
    const conflict = await cli(['retry', id], env);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('TASK_STATE_CONFLICT');

    // Whole-queue operations: pause, resume, purge, delete.
    expect((await cli(['pause', 'mail'], env)).stdout).toBe('mail  paused\n');
    expect((await cli(['pause', 'mail'], env)).stdout).toBe('mail  paused (already)\n');
    expect((await cli(['list'], env)).stdout).toContain('mail  PAUSED  depth 0');
    expect((await queue.queueInfo('mail')).paused).toBe(true);
    expect((await cli(['resume', 'mail'], env)).stdout).toBe('mail  resumed\n');
    await queue.enqueueMany('mail', [{ name: 'a' }, { name: 'b' }]);
    expect((await cli(['purge', 'mail'], env)).stdout).toBe('2 purged\n');
    await queue.enqueue('mail', { name: 'c' });
    expect((await cli(['delete-queue', 'mail', '--json'], env)).stdout).toContain('"deleted": 2');
    expect(await queue.queues()).not.toContain('mail');
    const noTokenPause = await cli(['pause', 'jobs'], { MOLO_ADMIN_URL: node.adminUrl! });
    expect(noTokenPause.code).toBe(1);
    expect(noTokenPause.stderr).toContain('ADMIN_UNAUTHORIZED');
    await queue.createQueue('mail');

    // Errors: no token for a mutating command, an unknown task, usage.
    const noToken = await cli(['cancel', id], { MOLO_ADMIN_URL: node.adminUrl! });
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toContain('ADMIN_UNAUTHORIZED');
    const unknown = await cli(['status', '0190d7a0-0000-7000-8000-000000000000'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('TASK_NOT_FOUND');
    for (const argv of [[], ['frobnicate'], ['status'], ['enqueue', 'mail'], ['enqueue', 'mail', 'a', '--payload', '{'], ['list', '--bogus']]) {
      const usage = await cli(argv, env);
      expect(usage.code, argv.join(' ')).toBe(2);
      expect(usage.stderr).toContain(TASKS_USAGE);
    }
    const badFile = join(dir, 'bad.jsonl');
    writeFileSync(badFile, '{"name":"a"}\nnot json\n');
    const bad = await cli(['enqueue', 'mail', '--file', badFile], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad.jsonl:2: not JSON');
    expect((await queue.queueInfo('mail')).depth).toBe(0);
    expect((await cli(['help'], env)).stdout).toBe(TASKS_USAGE);
    await node.stop();
  }, 60_000);
});
