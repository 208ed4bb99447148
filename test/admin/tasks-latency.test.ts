/**
 * V7-2: 1,000 enqueues over HTTP, all accepted and all run to success by the node's worker pool
 * (handlers in threads, off the loop, as R7-5 asks), while a latency probe on the same node (a
 * GenServer call, one after another) keeps its p99 within 2x the p99 it had before the load. The
 * load comes from another process, so only the node's own work lands on its event loop. Both
 * stores: SQLite (statements in its worker thread) and Postgres (the wire protocol on the loop).
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskWorkersChild, type SqlTaskQueue } from '../../src/bus/index.js';
import { GenServer } from '../../src/behaviours/index.js';
import { TASK_BACKENDS } from '../bus/tasks/stores.js';
import { REPO, startTestNode } from './helpers.js';

const TOKEN = 'latency-probe-token-0123456789';

class Echo extends GenServer<number, number> {
  override handleCall(request: number): number {
    return request;
  }
}

function p99(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

describe.each(TASK_BACKENDS)('V7-2 on $name', (backend) => {
  let queue: SqlTaskQueue;
  beforeAll(async () => {
    await backend.setup();
    queue = await backend.open();
    await queue.createQueue('load');
  }, 30_000);
  afterAll(async () => {
    await queue.close();
    await backend.teardown();
  });

  it('1,000 tasks enqueued over HTTP all run to success; a concurrent probe keeps p99 within 2x its baseline', async () => {
    const workers = taskWorkersChild('load-workers', queue, {
      queue: 'load',
      concurrency: 2,
      pollMs: 20,
      executor: { placement: 'thread', module: new URL('./fixtures/noop-handlers.mjs', import.meta.url), prefetch: 16 },
    });
    const { node } = await startTestNode({ root: { children: [workers] }, admin: { port: 0, token: TOKEN, tasks: queue } });
    const echo = await GenServer.start(node.system, () => new Echo());
    /** Calls the echo server one call at a time until `done()`, with a 1 ms pause between calls; at least `min` samples. */
    const probe = async (min: number, done: () => boolean): Promise<number[]> => {
      const samples: number[] = [];
      while (samples.length < min || !done()) {
        const started = performance.now();
        await GenServer.call<Echo>(node.system, echo, samples.length);
        samples.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      return samples;
    };
    await probe(200, () => true); // warm-up: JIT, first connections
    const baseline = await probe(2_000, () => true);

    const succeeded = async (): Promise<number> => (await queue.queueInfo('load')).counts.succeeded;
    let finished = false;
    const load = new Promise<{ ok: number; failed: number; ms: number }>((resolve, reject) => {
      const child = spawn(process.execPath, ['test/admin/fixtures/enqueue-load.mjs', node.adminUrl!, TOKEN, '1000', '8'], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as { ok: number; failed: number; ms: number }) : reject(new Error(`load exited ${String(code)}`))));
    });
    // The probe runs until every task has run, not only until the enqueues are in.
    const ran = load.then(async () => {
      const deadline = Date.now() + 60_000;
      while ((await succeeded()) < 1_000 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    }).finally(() => (finished = true));
    const [underLoad, result] = await Promise.all([probe(500, () => finished), load, ran]);

    expect(result).toMatchObject({ ok: 1_000, failed: 0 });
    const info = await queue.queueInfo('load');
    expect(info.counts.succeeded).toBe(1_000);
    expect(info.depth).toBe(0);
    expect(info.deadLetters).toBe(0);
    // Floored at 1 ms, the timer granularity the probe itself runs at.
    const base = Math.max(p99(baseline), 1);
    const loaded = p99(underLoad);
    process.stdout.write(`V7-2 on ${backend.name}: 1000 enqueues in ${result.ms} ms, all run; probe p99 ${p99(baseline).toFixed(3)} ms idle, ${loaded.toFixed(3)} ms under load (${underLoad.length} samples)\n`);
    await GenServer.stop(node.system, echo);
    await node.stop();
    expect(loaded).toBeLessThanOrEqual(2 * base);
  }, 120_000);
});
