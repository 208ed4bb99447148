/**
 * V7-6 / E7-6, on both stores: a child process fills the queue and runs workers; it is SIGKILLed
 * mid-run; a fresh process on the same database replays every unacked task (its leases run out and
 * the tasks run again) and completes them all: none lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildForChildren } from '../streams/child-build.js';
import { childEnv, startChild } from './children.js';
import { TASK_BACKENDS } from './stores.js';

const TASKS = 400;
let build: ReturnType<typeof buildForChildren>;

beforeAll(() => {
  build = buildForChildren('test/bus/tasks/fixtures/task-child.ts');
});
afterAll(() => build.remove());

describe.each(TASK_BACKENDS)('replay after SIGKILL on $name', (backend) => {
  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown(), 30_000);

  it(`every unacked task of a killed process runs again after restart (${TASKS} tasks)`, async () => {
    const env = { ...childEnv(backend, `replay${process.pid}`), TASK_CONCURRENCY: '4', TASK_WORK_MS: '5', TASK_LEASE_MS: '800' };
    const first = startChild(build.script, { ...env, TASK_FILL: String(TASKS) });
    await first.saw('READY');
    while (first.runs.length < 40) await new Promise((resolve) => setTimeout(resolve, 5));
    first.process.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const ranBefore = new Set(first.runs);
    expect(ranBefore.size).toBeLessThan(TASKS);

    const second = startChild(build.script, { ...env, TASK_EXIT_WHEN_DRAINED: '1' });
    await second.saw('DRAINED');
    expect((await second.exited).code).toBe(0);
    const all = new Set([...first.runs, ...second.runs]);
    expect(all.size).toBe(TASKS);
    // The tasks the killed process held when it died ran again in the second.
    const replayed = second.runs.filter((i) => ranBefore.has(i));
    expect(replayed.length).toBeGreaterThan(0);
    const { openTaskQueue } = await import('../../../src/bus/index.js');
    const queue = await openTaskQueue(backend.db, { table: `replay${process.pid}` });
    const info = await queue.queueInfo('jobs');
    expect(info.counts.succeeded).toBe(TASKS);
    expect(info.depth).toBe(0);
    expect(info.deadLetters).toBe(0);
    // Each task the killed process had started came back as an attempt (its lease expired); tasks leased but not yet started did too.
    const retried = new Set((await queue.list('jobs', { limit: 1_000 })).filter((record) => record.envelope.attempts > 0).map((record) => record.envelope.payload as number));
    for (const i of replayed) expect(retried.has(i), `task ${i} replayed without an attempt counted`).toBe(true);
    expect(retried.size).toBeLessThanOrEqual(4 * 2);
    await queue.close();
  }, 60_000);
});
