/**
 * `molo sup scale` as a child process against a real node: a simple_one_for_one group grown from
 * its template with --args and shrunk newest-first, through POST /actions/group/scale; a static
 * supervisor and a task pool's worker group are refused; the token rule; usage errors exit 2.
 */
import { describe, expect, it } from 'vitest';
import type { Ref } from '../../src/actors/index.js';
import { Supervisor, type ChildSpec } from '../../src/behaviours/index.js';
import { taskWorkersChild } from '../../src/bus/index.js';
import { TASK_BACKENDS } from '../bus/tasks/stores.js';
import { runMolo, startTestNode } from './helpers.js';

const TOKEN = 'sup-scale-token-0123456789abcdef';
const env = { MOLO_ADMIN_TOKEN: TOKEN };

describe('molo sup scale', () => {
  it('scales a simple_one_for_one group up with --args and down newest-first', { timeout: 60_000 }, async () => {
    const startedWith: unknown[][] = [];
    const template: ChildSpec = {
      id: 'conn',
      start: ({ system, parent, args }) => {
        startedWith.push([...args]);
        return system.spawn(() => {}, { link: parent });
      },
    };
    const { node } = await startTestNode({
      root: { children: [Supervisor.child('conns', { strategy: 'simple_one_for_one', children: [template] }), Supervisor.child('static', { children: [] })] },
      admin: { port: 0, token: TOKEN },
    });
    try {
      const url = ['--url', node.adminUrl!];
      const group = (await Supervisor.whichChildren(node.system, node.root)).find((child) => child.id === 'conns')!.ref as Ref;
      const live = async () => (await Supervisor.whichChildren(node.system, group)).map((child) => String(child.ref));

      const [refused, usage, badArgs, wrongKind] = await Promise.all([
        runMolo(['sup', 'scale', 'root/conns', '3', ...url]),
        runMolo(['sup', 'scale', 'root/conns', ...url], env),
        runMolo(['sup', 'scale', 'root/conns', '2', '--args', '{"a":1}', ...url], env),
        runMolo(['sup', 'scale', 'root/static', '2', ...url], env),
      ]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/HTTP 401.*set MOLO_ADMIN_TOKEN/);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('expected: molo sup scale PATH N');
      expect(badArgs.code).toBe(2);
      expect(badArgs.stderr).toContain('--args must be a JSON array');
      expect(wrongKind.code).toBe(1);
      expect(wrongKind.stderr).toMatch(/ADMIN_ACTION_FAILED.*only a simple_one_for_one group/);
      expect(await live()).toEqual([]);

      const up = await runMolo(['sup', 'scale', 'root/conns', '4', '--args', '["db", 2]', ...url], env);
      expect(up.code, up.stderr).toBe(0);
      expect(up.stdout).toMatch(/^root\/conns on .*: 0 → 4 children \(4 started, 0 terminated\)\n$/);
      expect(startedWith).toEqual([['db', 2], ['db', 2], ['db', 2], ['db', 2]]);
      const four = await live();
      expect(four).toHaveLength(4);

      const down = await runMolo(['sup', 'scale', 'root/conns', '1', '--json', ...url], env);
      expect(down.code, down.stderr).toBe(0);
      expect(JSON.parse(down.stdout)).toMatchObject({ path: 'root/conns', before: 4, after: 1, started: 0, terminated: 3 });
      // The oldest child is the one left.
      expect(await live()).toEqual([four[0]]);
      const same = await runMolo(['sup', 'scale', 'root/conns', '1', ...url], env);
      expect(same.stdout).toMatch(/1 → 1 children \(0 started, 0 terminated\)/);
    } finally {
      await node.stop();
    }
  });

  it("scales a task pool's concurrency: down, back up, held to the concurrency it started with", { timeout: 90_000 }, async () => {
    const backend = TASK_BACKENDS.find((candidate) => candidate.name === 'sqlite') ?? TASK_BACKENDS[0]!;
    await backend.setup();
    const queue = await backend.open();
    try {
      await queue.createQueue('jobs');
      const pool = taskWorkersChild('pool', queue, { queue: 'jobs', concurrency: 3, pollMs: 20, executor: { placement: 'thread', module: new URL('./fixtures/noop-handlers.mjs', import.meta.url), prefetch: 1 } });
      const { node } = await startTestNode({ root: { children: [pool] }, admin: { port: 0, token: TOKEN } });
      try {
        const url = ['--url', node.adminUrl!];
        const [down, zero, viaWorkers] = await Promise.all([
          runMolo(['sup', 'scale', 'root/pool', '1', ...url], env),
          runMolo(['sup', 'scale', 'root/pool', '0', ...url], env),
          runMolo(['sup', 'scale', 'root/pool/workers', '2', '--json', ...url], env),
        ]);
        expect(zero.code).toBe(1);
        expect(zero.stderr).toMatch(/HTTP 400.*at least 1 task.*molo tasks pause/);
        expect(down.code, down.stderr).toBe(0);
        expect(viaWorkers.code, viaWorkers.stderr).toBe(0);
        expect(JSON.parse(viaWorkers.stdout)).toMatchObject({ kind: 'task-pool', queue: 'jobs', max: 3 });
        expect(down.stdout).toMatch(/^root\/pool on .*: concurrency \d → 1 \(queue jobs, at most 3\)\n$/);

        const one = await runMolo(['sup', 'scale', 'root/pool/fetcher', '1', ...url], env);
        expect(one.stdout).toMatch(/concurrency \d → 1 /);
        expect(pool.handle.stats()).toMatchObject({ concurrency: 1, maxConcurrency: 3 });
        // With the limit at 1, the pool runs one task at a time: enqueue slow-free noops and watch `running`.
        for (let i = 0; i < 30; i++) await queue.enqueue('jobs', { name: 'noop', payload: { i } });
        let most = 0;
        const deadline = Date.now() + 30_000;
        while ((await queue.queueInfo('jobs')).counts.succeeded < 30 && Date.now() < deadline) {
          most = Math.max(most, pool.handle.stats().running);
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
        expect((await queue.queueInfo('jobs')).counts.succeeded).toBe(30);
        expect(most).toBeLessThanOrEqual(1);

        const over = await runMolo(['sup', 'scale', 'root/pool', '10', ...url], env);
        expect(over.code, over.stderr).toBe(0);
        expect(over.stdout).toMatch(/concurrency 1 → 3 \(queue jobs, at most 3\)/);
        expect(pool.handle.stats().concurrency).toBe(3);
      } finally {
        await node.stop();
      }
    } finally {
      await queue.close();
      await backend.teardown();
    }
  });
});
