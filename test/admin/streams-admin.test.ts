/**
 * The read-only `/streams` endpoints and `molo streams` / `molo consumers` on a real SQLite stream
 * store: list, info with consumers (lag, pending), a view of messages (values decoded, text and
 * binary bytes), typed 404s, bounds on the view, the token rule; one CLI run as a child process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Admin, startAdminHttp } from '../../src/admin/index.js';
import { openSqliteStreams } from '../../src/bus/index.js';
import { runStreamsCli } from '../../src/cli/streams.js';
import { testSystem } from '../support/systems.js';
import { runMolo } from './helpers.js';

const TOKEN = 'streams-admin-token-0123456789';

function cli(group: 'streams' | 'consumers', argv: string[], env: Record<string, string> = { MOLO_ADMIN_TOKEN: TOKEN }): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  return runStreamsCli(group, argv, { stdout: (text) => void (out += text), stderr: (text) => void (err += text), env }).then((code) => ({ code, out, err }));
}

describe('streams on the admin surface', () => {
  it('lists, describes and views streams and consumers through the StreamStore API', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'molo-streams-admin-'));
    const system = testSystem();
    const store = await openSqliteStreams(system, { file: join(dir, 'streams.db'), readers: 0 });
    await Admin.start({ system });
    const server = await startAdminHttp({ runtime: system, port: 0, token: TOKEN, streams: store });
    try {
      await store.createStream('orders');
      await store.publish('orders', { id: 1, total: 9.5 });
      await store.publish('orders', Buffer.from('plain text'), { headers: { kind: 'note' } });
      await store.publish('orders', Buffer.from([0xff, 0x00, 0xfe]));
      await store.createConsumer('orders', 'billing');
      await store.fetch('orders', 'billing', { batch: 1 });
      const auth = { authorization: `Bearer ${TOKEN}` };
      const get = async (path: string) => {
        const response = await fetch(`${server.url}${path}`, { headers: auth });
        return { status: response.status, body: (await response.json()) as any };
      };

      expect((await fetch(`${server.url}/streams`)).status).toBe(401);
      expect((await get('/streams')).body.streams).toMatchObject([{ name: 'orders', messages: 3, lastSeq: 3, consumers: 1 }]);
      const info = await get('/streams/orders');
      expect(info.body.consumers).toMatchObject([{ name: 'billing', pending: 1, lag: 2, nextSeq: 2 }]);
      const view = (await get('/streams/orders/messages')).body.messages;
      expect(view.map((m: any) => m.seq)).toEqual([1, 2, 3]);
      expect(view[0]).toMatchObject({ encoding: 'msgpack', value: { id: 1, total: 9.5 }, truncated: false });
      expect(view[1]).toMatchObject({ encoding: 'bytes', text: 'plain text', headers: { kind: 'note' } });
      expect(view[2]).toMatchObject({ encoding: 'bytes', base64: Buffer.from([0xff, 0x00, 0xfe]).toString('base64') });
      expect((await get('/streams/orders/messages?from=2&limit=1')).body.messages.map((m: any) => m.seq)).toEqual([2]);
      expect((await get('/streams/orders/messages?limit=101')).status).toBe(400);
      expect((await get('/streams/orders/consumers/billing')).body).toMatchObject({ stream: 'orders', name: 'billing', lag: 2 });
      const missing = await get('/streams/nope');
      expect([missing.status, missing.body.error.code]).toEqual([404, 'STREAM_NOT_FOUND']);
      expect((await get('/streams/orders/consumers/nope')).body.error.code).toBe('STREAM_CONSUMER_NOT_FOUND');
      expect((await fetch(`${server.url}/streams/orders`, { method: 'POST', headers: auth })).status).toBe(405);

      const url = ['--url', server.url];
      const ls = await cli('streams', ['ls', ...url]);
      expect(ls.code, ls.err).toBe(0);
      expect(ls.out).toMatch(/STREAM.*MESSAGES.*BYTES.*LAST SEQ.*CONSUMERS/);
      expect(ls.out).toMatch(/orders\s*│\s*3\s*│/);
      const described = await cli('streams', ['info', 'orders', ...url]);
      expect(described.out).toMatch(/orders\s*│\s*billing\s*│\s*0\s*│\s*2\s*│\s*1\s*│\s*2\s*│/);
      const viewed = await cli('streams', ['view', 'orders', '--limit', '2', ...url]);
      expect(viewed.out).toMatch(/^2 .* bytes 10 B {2}"plain text"\n3 .* base64:\/wD\+\n$/);
      expect((await cli('consumers', ['info', 'orders', 'billing', '--json', ...url])).out).toContain('"lag": 2');
      expect((await cli('streams', ['info', 'nope', ...url])).code).toBe(1);
      expect((await cli('streams', ['purge', ...url])).code).toBe(2);
      const child = await runMolo(['streams', 'ls', ...url]);
      expect(child.code).toBe(1);
      expect(child.stderr).toContain('set MOLO_ADMIN_TOKEN');
    } finally {
      await server.close();
      await store.close();
      await Admin.stop(system, 'admin');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
