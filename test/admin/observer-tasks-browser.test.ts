/**
 * The observer page's task list in headless Chromium against a real node: a queue's Tasks button
 * lists its tasks; Cancel, Retry and Redrive DLQ are refused without the token (nothing changes)
 * and done with it, checked through the queue's own API.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteTaskQueue, startTaskWorkers, type SqlTaskQueue } from '../../src/bus/index.js';
import { eventuallyAsync } from '../data/kv/stores.js';
import { testSystem } from '../support/systems.js';
import { startTestNode } from './helpers.js';
import { openObserver, setToken, type OpenPage } from './observer-page.js';

const TOKEN = 'observer-tasks-token-0123456789abcdef';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'molo-observer-tasks-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('the observer page’s task list', () => {
  it('lists a queue’s tasks; cancel, retry and redrive: refused without the token, done with it', { timeout: 60_000 }, async () => {
    const system = testSystem();
    const queue: SqlTaskQueue = await openSqliteTaskQueue(system, { file: join(dir, 'tasks.db'), readers: 0 });
    let open: OpenPage | undefined;
    try {
      await queue.createQueue('jobs');
      // A dead letter, made by a real pool whose handler fails with no retries left; the pool is then stopped.
      const failing = await startTaskWorkers(system, queue, { queue: 'jobs', concurrency: 1, pollMs: 20, executor: { placement: 'loop', handlers: { boom: () => { throw new Error('boom'); } } } });
      const { id: dead } = await queue.enqueue('jobs', { name: 'boom', maxRetries: 0 });
      const { id: dead2 } = await queue.enqueue('jobs', { name: 'boom', maxRetries: 0 });
      for (const id of [dead, dead2]) await eventuallyAsync(async () => (await queue.get(id))?.state === 'dead-lettered', 10_000, 'dead-lettered');
      await failing.stop();
      const { id: waiting } = await queue.enqueue('jobs', { name: 'later' });

      const { node } = await startTestNode({ system, root: { children: [] }, admin: { port: 0, token: TOKEN, tasks: queue, observer: { sampleIntervalMs: 200 } } });
      open = await openObserver(dir, node.adminUrl!, TOKEN);
      const { page } = open;
      await page.locator('#queues-view tr[data-queue="jobs"] button[data-tasks-view="jobs"]').click();
      const cancel = `#task-list tr[data-task-row="${waiting}"] button[data-task-op="cancel"]`;
      const retry = `#task-list tr[data-task-row="${dead}"] button[data-task-op="retry"]`;
      await page.locator(cancel).waitFor();
      await page.locator(retry).waitFor();
      expect(await page.locator(`#task-list tr[data-task-row="${dead}"]`).textContent()).toMatch(/dead-lettered1\/1/);

      await setToken(page, undefined);
      const refused = async (label: string) => page.locator('#action-result.refused', { hasText: new RegExp(`^${label}.*401 ADMIN_UNAUTHORIZED`) }).waitFor();
      await page.locator(cancel).click();
      await refused(`cancel task ${waiting}`);
      await page.locator('#task-list button[data-task="redrive"]').click();
      await refused('redrive jobs');
      expect((await queue.get(waiting))?.state).toBe('queued');
      expect((await queue.get(dead))?.state).toBe('dead-lettered');

      await setToken(page, TOKEN);
      const done = async (label: string) => page.locator('#action-result:not(.refused)', { hasText: new RegExp(`^${label}: done$`) }).waitFor();
      await page.locator(cancel).click();
      await done(`cancel task ${waiting}`);
      expect((await queue.get(waiting))?.state).toBe('cancelled');
      // The list is read again: a cancelled task is terminal and offers nothing.
      await page.locator(`#task-list tr[data-task-row="${waiting}"] .task-state`, { hasText: /^cancelled$/ }).waitFor();
      expect(await page.locator(`#task-list tr[data-task-row="${waiting}"] button`).count()).toBe(0);
      await page.locator(retry).click();
      await done(`retry task ${dead}`);
      expect((await queue.get(dead))?.state).toBe('queued');
      await page.locator(`#task-list tr[data-task-row="${dead}"] .task-state`, { hasText: /^queued$/ }).waitFor();
      await page.locator('#task-list button[data-task="redrive"]').click();
      await done('redrive jobs');
      expect((await queue.get(dead2))?.state).toBe('queued');
      await page.locator(`#task-list tr[data-task-row="${dead2}"] .task-state`, { hasText: /^queued$/ }).waitFor();
      expect(open.problems).toEqual([]);
    } finally {
      await open?.context.close();
      await queue.close();
    }
  });
});
