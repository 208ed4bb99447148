/**
 * Chaos on Postgres: 10,000 tasks, three worker processes on one database, one of them SIGKILLed
 * at a random moment every few hundred ms and started again, until every task has succeeded
 * (bounded: well under 60 s). Every task completes, none is lost or dead-lettered; tasks that ran
 * more than once (a kill between the handler and the ack) are counted and printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTaskQueue } from '../../../src/bus/index.js';
import { buildForChildren } from '../streams/child-build.js';
import { childEnv, startChild, type TaskChild } from './children.js';
import { TASK_BACKENDS } from './stores.js';

const TASKS = 10_000;
const PROCESSES = 3;
const backend = TASK_BACKENDS.find((candidate) => candidate.name === 'postgres')!;
let build: ReturnType<typeof buildForChildren>;

beforeAll(async () => {
  build = buildForChildren('test/bus/tasks/fixtures/task-child.ts');
  await backend.setup();
}, 30_000);
afterAll(async () => {
  build.remove();
  await backend.teardown();
}, 30_000);

describe('task queue chaos on postgres', () => {
  it(`${TASKS} tasks survive worker processes SIGKILLed at random points`, async () => {
    const table = `chaos${process.pid}`;
    const queue = await openTaskQueue(backend.db, { table });
    await queue.createQueue('jobs', { leaseMs: 1_000, heartbeatMs: 200 });
    for (let i = 0; i < TASKS; i += 1_000) {
      await queue.enqueueMany('jobs', Array.from({ length: 1_000 }, (_, k) => ({ name: 'job', payload: i + k, maxRetries: 50 })));
    }
    const env = { ...childEnv(backend, table), TASK_CONCURRENCY: '8', TASK_LEASE_MS: '1000' };
    const children: TaskChild[] = [];
    const live: TaskChild[] = [];
    const spawnOne = async (): Promise<void> => {
      const child = startChild(build.script, env);
      children.push(child);
      live.push(child);
      await child.saw('READY');
    };
    await Promise.all(Array.from({ length: PROCESSES }, spawnOne));
    const began = Date.now();
    let kills = 0;
    for (;;) {
      const info = await queue.queueInfo('jobs');
      if (info.counts.succeeded === TASKS) break;
      expect(Date.now() - began, `still ${info.depth} tasks left`).toBeLessThan(50_000);
      await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 350));
      // Kills stop after 15 s so the run ends within its bound even on a loaded machine.
      if (Date.now() - began < 15_000) {
        const victim = live.splice(Math.floor(Math.random() * live.length), 1)[0]!;
        victim.process.kill('SIGKILL');
        await victim.exited;
        kills++;
        // Not awaited: the next victim may be a process still starting up.
        void spawnOne().catch(() => undefined);
      }
    }
    for (const child of live) child.process.kill('SIGKILL');
    await Promise.all(live.map((child) => child.exited));
    const counts = new Map<number, number>();
    for (const child of children) for (const i of child.runs) counts.set(i, (counts.get(i) ?? 0) + 1);
    const duplicates = [...counts.values()].filter((n) => n > 1).reduce((sum, n) => sum + n - 1, 0);
    console.log(`chaos: ${TASKS} tasks, ${kills} SIGKILLs, ${duplicates} duplicate runs, ${((Date.now() - began) / 1_000).toFixed(1)} s`);
    expect(kills).toBeGreaterThan(5);
    for (let i = 0; i < TASKS; i++) expect(counts.has(i), `task ${i} never ran`).toBe(true);
    const info = await queue.queueInfo('jobs');
    expect(info.counts.succeeded).toBe(TASKS);
    expect(info.deadLetters).toBe(0);
    await queue.close();
  }, 80_000);
});
