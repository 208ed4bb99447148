/**
 * Issue 28 §1: a thread or process pool whose `executor.prefetch` is unset adapts it to how long
 * its tasks take (short tasks: more per host at once, up to min(concurrency, 64); long ones: back
 * down to 1); an explicit `prefetch` stays as given. Through a real SQLite queue and thread hosts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTaskWorkers, type TaskWorkersOptions } from '../../../src/bus/index.js';
import { AdaptivePrefetch } from '../../../src/bus/tasks/adaptive-prefetch.js';
import { sleep, testSystem } from '../../support/systems.js';
import { TASK_BACKENDS } from './stores.js';

const handlersModule = new URL('./fixtures/handlers.ts', import.meta.url);
const sqlite = TASK_BACKENDS.find((backend) => backend.name.includes('sqlite'))!;

/** Runs `n` tasks named `name` through a pool with `executor`; the pool's prefetch seen along the way. */
async function run(executor: TaskWorkersOptions['executor'], concurrency: number, tasks: readonly { name: string; payload?: number }[]): Promise<{ first: number; most: number; last: number }> {
  const system = testSystem();
  const queue = await sqlite.open();
  await queue.createQueue('adapt');
  const pool = await startTaskWorkers(system, queue, { queue: 'adapt', executor, concurrency, pollMs: 20 });
  try {
    const first = pool.stats().prefetch;
    await queue.enqueueMany('adapt', tasks);
    let most = first;
    for (const deadline = Date.now() + 40_000; pool.stats().succeeded < tasks.length && Date.now() < deadline; await sleep(2)) most = Math.max(most, pool.stats().prefetch);
    expect(pool.stats().succeeded).toBe(tasks.length);
    return { first, most, last: pool.stats().prefetch };
  } finally {
    await pool.stop(0);
    await queue.close();
    await system.shutdown();
  }
}

describe('adaptive prefetch', () => {
  beforeAll(() => sqlite.setup(), 30_000);
  afterAll(() => sqlite.teardown());

  it('unset, with short tasks: the effective prefetch rises from 1 to its cap, min(concurrency, 64)', async () => {
    const seen = await run({ placement: 'thread', module: handlersModule }, 4, Array.from({ length: 300 }, () => ({ name: 'noop' })));
    expect(seen.first).toBe(1);
    expect(seen.most).toBe(4);
  }, 60_000);

  it.each([1, 3])('explicit prefetch %i stays as given, however short the tasks', async (prefetch) => {
    const seen = await run({ placement: 'thread', module: handlersModule, prefetch }, 4, Array.from({ length: 300 }, () => ({ name: 'noop' })));
    expect(seen).toEqual({ first: prefetch, most: prefetch, last: prefetch });
  }, 60_000);

  it('unset, with long tasks: it stays at 1', async () => {
    const seen = await run({ placement: 'thread', module: handlersModule }, 2, Array.from({ length: 20 }, () => ({ name: 'sleep', payload: 60 })));
    expect(seen).toEqual({ first: 1, most: 1, last: 1 });
  }, 60_000);

  it('on the loop it is 1: each task is a worker of its own', async () => {
    const seen = await run({ placement: 'loop', handlers: { noop() {} } }, 2, Array.from({ length: 50 }, () => ({ name: 'noop' })));
    expect(seen).toEqual({ first: 1, most: 1, last: 1 });
  }, 60_000);
});

describe('AdaptivePrefetch', () => {
  const feed = (adaptive: AdaptivePrefetch, ms: number, times: number): number => {
    for (let i = 0; i < times; i++) adaptive.observe(ms);
    return adaptive.value;
  };

  it('doubles per window of short tasks up to its cap, halves per window of long ones down to 1, holds in between', () => {
    const adaptive = new AdaptivePrefetch(10);
    expect(adaptive.value).toBe(1);
    expect(feed(adaptive, 1, 7)).toBe(1);
    expect(feed(adaptive, 1, 1)).toBe(2);
    expect(feed(adaptive, 1, 8 * 4)).toBe(10);
    expect(feed(adaptive, 10, 8 * 5)).toBe(10);
    expect(feed(adaptive, 100, 8)).toBe(5);
    expect(feed(adaptive, 100, 8 * 5)).toBe(1);
  });
});
