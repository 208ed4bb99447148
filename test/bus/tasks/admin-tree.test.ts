/**
 * Worker pools in the admin tree: under an application supervisor (`taskWorkersChild`), a pool is
 * a supervisor of its workers and its fetcher; `taskPoolsProvider` puts each pool's queue depth,
 * dead letters and counts in the snapshot's `sections.tasks`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takeTreeSnapshot } from '../../../src/admin/tree-snapshot.js';
import { Supervisor } from '../../../src/behaviours/index.js';
import { TASK_POOL_BEHAVIOUR, taskPoolsProvider, taskWorkersChild, type TaskWorkersStats } from '../../../src/bus/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { TASK_BACKENDS } from './stores.js';

const backend = TASK_BACKENDS.find((b) => b.name === 'sqlite')!;
beforeAll(() => backend.setup(), 30_000);
afterAll(() => backend.teardown());

describe('task pools in the admin tree', () => {
  it('shows each pool with its workers, and its queue depth in sections.tasks', async () => {
    const system = testSystem();
    const queue = await backend.open();
    await queue.createQueue('emails');
    await queue.enqueueMany('emails', Array.from({ length: 3 }, () => ({ name: 'later', runAt: Date.now() + 60_000 })));
    const child = taskWorkersChild('email-workers', queue, { queue: 'emails', concurrency: 3, pollMs: 10, executor: { placement: 'loop', handlers: { later: () => undefined } } });
    const root = await Supervisor.start(system, { children: [child] });
    await eventually(() => child.handle.stats().depth === 3, 5_000, 'the pool looked at its queue');
    const provider = taskPoolsProvider();
    const snapshot = await takeTreeSnapshot({ runtime: system, root, providers: new Map([[provider.behaviour, provider]]), maxBytes: 1 << 20, callTimeoutMs: 2_000, timeoutMs: 5_000 });
    expect(snapshot.errors).toBe(0);
    const entries = snapshot.sections['tasks'] ?? [];
    expect(entries).toHaveLength(1);
    expect(entries[0]!.path).toContain('email-workers');
    expect(entries[0]!.value as TaskWorkersStats).toMatchObject({ queue: 'emails', workers: 3, running: 0, depth: 3, deadLetters: 0 });
    const pool = snapshot.root!.children!.find((node) => node.id === 'email-workers')!;
    const workers = pool.children!.find((node) => node.id === 'workers')!;
    expect(workers.children).toHaveLength(3);
    expect(pool.children!.find((node) => node.id === 'fetcher')?.process?.behaviour).toBe(TASK_POOL_BEHAVIOUR);
    await Supervisor.stop(system, root);
    await queue.close();
  });
});
