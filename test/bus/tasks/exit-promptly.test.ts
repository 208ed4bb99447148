/**
 * A process that stops its worker pool and closes its queue ends on its own, promptly: the pool's
 * stop leaves no timer on the event loop (a bounded final flush used to keep the process alive
 * for its full 10 s after every stop).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildForChildren } from '../streams/child-build.js';
import { childEnv, startChild } from './children.js';
import { TASK_BACKENDS } from './stores.js';

let build: ReturnType<typeof buildForChildren>;

beforeAll(() => {
  build = buildForChildren('test/bus/tasks/fixtures/task-child.ts');
});
afterAll(() => build.remove());

describe.each(TASK_BACKENDS)('a stopped pool on $name', (backend) => {
  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown(), 30_000);

  it('lets its process exit within 2 s of the stop', async () => {
    const env = { ...childEnv(backend, `exit${process.pid}`), TASK_FILL: '20', TASK_CONCURRENCY: '2', TASK_EXIT_WHEN_DRAINED: '1', TASK_STOP_WHEN_DRAINED: '1' };
    const child = startChild(build.script, env);
    await child.saw('STOPPED');
    const stoppedAt = Date.now();
    const { code } = await child.exited;
    expect(code, child.stderr()).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(2_000);
    expect(new Set(child.runs).size).toBe(20);
  }, 30_000);
});
