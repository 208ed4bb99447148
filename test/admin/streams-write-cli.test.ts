/**
 * `molo streams purge` and `molo consumers reset` as child processes against a real admin surface
 * on a real SQLite stream store: a purge in batches with its progress on stderr, a consumer moved
 * by sequence, to the first message, past the last and by time; the token rule on the writes
 * (401 names the variable, 403 without a configured token); usage errors exit 2.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Admin, startAdminHttp } from '../../src/admin/index.js';
import { openSqliteStreams, type StreamStore } from '../../src/bus/index.js';
import { testSystem } from '../support/systems.js';
import { REPO, runMolo } from './helpers.js';

const TOKEN = 'streams-write-token-0123456789';
const env = { MOLO_ADMIN_TOKEN: TOKEN };

describe('molo streams purge and molo consumers reset', () => {
  let dir: string;
  let system: ReturnType<typeof testSystem>;
  let store: StreamStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'molo-streams-write-'));
    system = testSystem();
    store = await openSqliteStreams(system, { file: join(dir, 'streams.db'), readers: 0 });
    await Admin.start({ system });
  });
  afterEach(async () => {
    await store.close();
    await Admin.stop(system, 'admin');
    rmSync(dir, { recursive: true, force: true });
  });

  it('purges in batches with progress, and moves a consumer by sequence, time, first and new', { timeout: 60_000 }, async () => {
    const server = await startAdminHttp({ runtime: system, port: 0, token: TOKEN, streams: store });
    try {
      await store.createStream('orders');
      for (let i = 1; i <= 25; i++) await store.publish('orders', { i });
      await store.createConsumer('orders', 'billing');
      await store.fetch('orders', 'billing', { batch: 3 });
      const url = ['--url', server.url];

      const [refused, badPurge, badReset, purged] = await Promise.all([
        runMolo(['streams', 'purge', 'orders', ...url]),
        runMolo(['streams', 'purge', 'orders', '--keep', '1', '--before-seq', '3', ...url], env),
        runMolo(['consumers', 'reset', 'orders', 'billing', '--seq', '3', '--first', ...url], env),
        runMolo(['streams', 'purge', 'orders', '--keep', '5', '--batch', '7', ...url], env),
      ]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/HTTP 401.*set MOLO_ADMIN_TOKEN/);
      expect(badPurge.code).toBe(2);
      expect(badPurge.stderr).toContain('at most one of --before-seq, --keep, --older-than');
      expect(badReset.code).toBe(2);
      expect(badReset.stderr).toContain('exactly one of --seq, --time, --first, --new');
      expect(purged.code, purged.stderr).toBe(0);
      expect(purged.stderr.trimEnd().split('\n')).toEqual(['purged 7/20', 'purged 14/20', 'purged 20/20']);
      expect(purged.stdout).toBe('20 messages purged from orders\n');
      expect(await store.streamInfo('orders')).toMatchObject({ messages: 5, lastSeq: 25 });

      const reset = await runMolo(['consumers', 'reset', 'orders', 'billing', '--seq', '23', '--json', ...url], env);
      expect(reset.code, reset.stderr).toBe(0);
      expect(JSON.parse(reset.stdout)).toEqual({ stream: 'orders', consumer: 'billing', nextSeq: 23 });
      expect(await store.consumerInfo('orders', 'billing')).toMatchObject({ nextSeq: 23, pending: 0 });

      const first = await runMolo(['consumers', 'reset', 'orders', 'billing', '--first', ...url], env);
      expect(first.stdout).toBe('orders/billing: next sequence 21\n');
      const latest = await runMolo(['consumers', 'reset', 'orders', 'billing', '--new', ...url], env);
      expect(latest.stdout).toBe('orders/billing: next sequence 26\n');
      const byTime = await runMolo(['consumers', 'reset', 'orders', 'billing', '--time', new Date(0).toISOString(), ...url], env);
      expect(byTime.code, byTime.stderr).toBe(0);
      expect(byTime.stdout).toBe('orders/billing: next sequence 21\n');

      const all = await runMolo(['streams', 'purge', 'orders', '--json', ...url], env);
      expect(all.code, all.stderr).toBe(0);
      expect(JSON.parse(all.stdout)).toEqual({ stream: 'orders', purged: 5 });
      const missing = await runMolo(['consumers', 'reset', 'orders', 'nope', '--first', ...url], env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('STREAM_CONSUMER_NOT_FOUND');
      // A read path is not a write: GET on the purge path has no route, POST on a read path is 405.
      expect((await fetch(`${server.url}/streams/orders/purge`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
      expect((await fetch(`${server.url}/streams/orders/purge`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '{"bogus":1}' })).status).toBe(400);
    } finally {
      await server.close();
    }
  });

  it('draws a progress bar when stderr is a terminal (under script(1), a real pty)', { timeout: 60_000 }, async () => {
    const server = await startAdminHttp({ runtime: system, port: 0, token: TOKEN, streams: store });
    try {
      await store.createStream('orders');
      for (let i = 1; i <= 10; i++) await store.publish('orders', { i });
      const command = `${process.execPath} --import tsx src/cli/molo.ts streams purge orders --batch 3 --url ${server.url}`;
      const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, out).toBe(0);
      // cli-progress redraws one line in place (\x1b[1G ... \x1b[0K), ending at 100%; the result line follows.
      expect(out).toMatch(/\x1b\[1Gpurged \[-+\] 0\/10 0%/);
      expect(out).toMatch(/\x1b\[1Gpurged \[=+\] 10\/10 100%/);
      expect(out).toMatch(/10 messages purged from orders\r?\n$/);
      expect(out).not.toContain('purged 3/10');
    } finally {
      await server.close();
    }
  });

  it('refuses the writes with 403 on a surface that has no token', { timeout: 30_000 }, async () => {
    const server = await startAdminHttp({ runtime: system, port: 0, streams: store });
    try {
      await store.createStream('orders');
      await store.publish('orders', { i: 1 });
      const run = await runMolo(['streams', 'purge', 'orders', '--url', server.url]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/HTTP 403.*ADMIN_TOKEN_REQUIRED.*give the node an admin.token/);
      expect((await store.streamInfo('orders')).messages).toBe(1);
    } finally {
      await server.close();
    }
  });
});
