/**
 * The observer page's operator buttons in headless Chromium against a real node and its admin
 * surface: Scale (a simple_one_for_one group's children, a task pool's concurrency), Purge… (a
 * stream, after a confirmation; dismissing it purges nothing) and Seek… (a stream consumer's
 * position). Without the token each is refused (401) and nothing changes; with it each is done,
 * checked through the public APIs, and the page shows the result.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ref } from '../../src/actors/index.js';
import type { TreeSnapshot } from '../../src/admin/index.js';
import { Supervisor, type ChildSpec } from '../../src/behaviours/index.js';
import { openSqliteStreams, openSqliteTaskQueue, taskWorkersChild, type SqlStreamStore, type SqlTaskQueue } from '../../src/bus/index.js';
import { testSystem } from '../support/systems.js';
import { startTestNode } from './helpers.js';
import { clickAnswering, openObserver, setToken, type OpenPage } from './observer-page.js';

const TOKEN = 'observer-operator-token-0123456789';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'molo-observer-operator-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const template: ChildSpec = { id: 'conn', start: ({ system, parent }) => system.spawn(() => {}, { link: parent }) };

describe('the observer page’s operator buttons', () => {
  it('scale a group and a task pool, purge a stream, seek a consumer: refused without the token, done with it', { timeout: 60_000 }, async () => {
    const system = testSystem();
    const queue: SqlTaskQueue = await openSqliteTaskQueue(system, { file: join(dir, 'tasks.db'), readers: 0 });
    const streams: SqlStreamStore = await openSqliteStreams(system, { file: join(dir, 'streams.db'), readers: 0 });
    let open: OpenPage | undefined;
    try {
      await queue.createQueue('jobs');
      await streams.createStream('orders');
      for (let i = 1; i <= 5; i++) await streams.publish('orders', { order: i });
      await streams.createConsumer('orders', 'billing');
      const pool = taskWorkersChild('pool', queue, { queue: 'jobs', concurrency: 3, pollMs: 50, executor: { placement: 'loop', handlers: { noop: async () => {} } } });
      const { node } = await startTestNode({
        system,
        root: { children: [Supervisor.child('conns', { strategy: 'simple_one_for_one', children: [template] }), pool] },
        admin: { port: 0, token: TOKEN, tasks: queue, streams, observer: { sampleIntervalMs: 200 } },
      });
      const group = (await Supervisor.whichChildren(system, node.root)).find((child) => child.id === 'conns')!.ref as Ref;
      const groupSize = async () => (await Supervisor.countChildren(system, group)).active;
      const tree = async () => (await (await fetch(`${node.adminUrl}/tree`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as TreeSnapshot;
      const concurrency = async () => ((await tree()).sections['tasks']![0]!.value as { concurrency: number }).concurrency;

      open = await openObserver(dir, node.adminUrl!, TOKEN);
      const { page } = open;
      const groupScale = '.tree tr[data-path="root/conns"] button[data-scale]';
      const poolScale = '.tree tr[data-path="root/pool/fetcher"] button[data-scale]';
      await page.locator(groupScale).waitFor();
      await page.locator(`${poolScale}[data-count="3"]`).waitFor();
      await page.locator('#stream-list tr[data-stream="orders"] button[data-purge]').waitFor();
      await page.locator('#stream-list tr[data-stream="orders"] button[data-view]').click();
      const seek = '#stream-messages tr[data-consumer="billing"] button[data-seek-consumer]';
      await page.locator('#stream-messages tr[data-consumer="billing"] .next-seq', { hasText: /^1$/ }).waitFor();

      // Without the token: every button is refused by the surface, and nothing changed.
      await setToken(page, undefined);
      const refused = async (label: string) => page.locator('#action-result.refused', { hasText: new RegExp(`^${label}.*401 ADMIN_UNAUTHORIZED`) }).waitFor();
      expect(await clickAnswering(page, groupScale, '3')).toContain('how many children');
      await refused('scale root/conns');
      expect(await clickAnswering(page, poolScale, '1')).toContain('tasks at once');
      await refused('scale root/pool/fetcher');
      await clickAnswering(page, '#stream-list tr[data-stream="orders"] button[data-purge]', true);
      await refused('purge orders');
      await clickAnswering(page, seek, 'new');
      await refused('seek billing');
      expect([await groupSize(), await concurrency()]).toEqual([0, 3]);
      expect((await streams.streamInfo('orders')).messages).toBe(5);
      expect((await streams.consumerInfo('orders', 'billing')).nextSeq).toBe(1);

      // With it: each is done, and the page shows it.
      await setToken(page, TOKEN);
      const done = async (label: string) => page.locator('#action-result:not(.refused)', { hasText: new RegExp(`^${label}.*: done$`) }).waitFor();
      await clickAnswering(page, groupScale, '3');
      await done('scale root/conns on .* to \\d');
      expect(await groupSize()).toBe(3);
      await page.locator('.tree tr[data-path="root/conns"] button[data-scale][data-count="3"]').waitFor();
      await clickAnswering(page, poolScale, '1');
      await done('scale root/pool/fetcher');
      expect(await concurrency()).toBe(1);
      await page.locator(`${poolScale}[data-count="1"]`).waitFor();
      await clickAnswering(page, groupScale, '1');
      await done('scale root/conns on .* to \\d');
      expect(await groupSize()).toBe(1);

      expect(await clickAnswering(page, seek, 'new')).toContain('first, new, a sequence number');
      await done('seek billing on orders to new');
      expect((await streams.consumerInfo('orders', 'billing')).nextSeq).toBe(6);
      await page.locator('#stream-messages tr[data-consumer="billing"] .next-seq', { hasText: /^6$/ }).waitFor();
      await clickAnswering(page, seek, '2');
      await done('seek billing on orders to 2');
      expect((await streams.consumerInfo('orders', 'billing')).nextSeq).toBe(2);

      // Purge asks first: dismissed, nothing is purged; confirmed, the stream is empty.
      const purge = '#stream-list tr[data-stream="orders"] button[data-purge]';
      expect(await clickAnswering(page, purge, false)).toContain('Purge every message of stream orders');
      expect((await streams.streamInfo('orders')).messages).toBe(5);
      await clickAnswering(page, purge, true);
      await done('purge orders');
      expect((await streams.streamInfo('orders')).messages).toBe(0);
      await page.locator('#stream-list tr[data-stream="orders"] td:nth-child(2)', { hasText: /^0$/ }).waitFor();
      await page.locator('#stream-messages', { hasText: 'no messages' }).waitFor();
      expect(open.problems).toEqual([]);
    } finally {
      await open?.context.close();
      await queue.close();
      await streams.close();
    }
  });
});
