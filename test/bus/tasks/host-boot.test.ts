/**
 * Issue 28 §1: what a thread or process host pays at boot. The task host module (what the host
 * imports beside the kernel, to run a handler) stays lean: its runtime imports (type-only ones are
 * erased) never reach an index module (a whole layer or the runtime) nor a package. A pool is
 * ready once its first host is up, the others boot on (`stats().booting`), tasks go only to hosts
 * that are up, and `molo_task_host_boots_total` counts boots by outcome.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { inspect } from 'node:util';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidBusOption, startTaskWorkers } from '../../../src/bus/index.js';
import { projectRoot } from '../../support/run-script.js';
import { sleep, testSystem } from '../../support/systems.js';
import { TASK_BACKENDS, until } from './stores.js';

const SRC = join(projectRoot, 'src');
// A whole statement: `import …;` or `export … from …;`, so `import type` can be told apart.
const STATEMENT = /^(import|export)\s[^;]*?from\s+'([^']+)'/gms;

/** The src files `entry` loads at run time, itself included, and the packages it imports. */
function runtimeImports(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(STATEMENT)) {
      if (/^(import|export)\s+type\s/.test(match[0])) continue;
      const specifier = match[2]!;
      if (!specifier.startsWith('.')) {
        if (!specifier.startsWith('node:')) packages.add(specifier);
        continue;
      }
      visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
    }
  };
  visit(join(SRC, entry));
  return { files: [...files].map((file) => relative(SRC, file)).sort(), packages: [...packages].sort() };
}

describe('the task host module', () => {
  it('imports no index module and no package: only what running a handler needs', () => {
    const { files, packages } = runtimeImports('bus/tasks/executors/task-host.ts');
    expect(files.filter((file) => file.endsWith('index.ts'))).toEqual([]);
    expect(packages).toEqual([]);
    // The envelope module brings id generation (a package) and the actors index.
    expect(files).not.toContain('bus/tasks/envelope.ts');
    expect(files).toContain('bus/tasks/executors/run-handler.ts');
  });
});

const bootOrder = new URL('./fixtures/boot-order-handlers.ts', import.meta.url);
const sqlite = TASK_BACKENDS.find((backend) => backend.name.includes('sqlite'))!;
const dirs: string[] = [];

function moduleWith(query: Record<string, string>): URL {
  const dir = mkdtempSync(join(tmpdir(), 'molo-boot-order-'));
  dirs.push(dir);
  const url = new URL(bootOrder);
  for (const [key, value] of Object.entries({ dir, ...query })) url.searchParams.set(key, value);
  return url;
}

function metricValue(text: string, line: string): number {
  return Number(new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

describe('a thread pool boots its hosts', () => {
  beforeAll(() => sqlite.setup(), 30_000);
  afterAll(async () => {
    await sqlite.teardown();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('is ready once its first host is up; the rest keep booting (stats().booting) while the first runs tasks', async () => {
    const system = testSystem();
    const registry = new Registry();
    const queue = await sqlite.open(undefined, { metrics: registry });
    await queue.createQueue('boots');
    const started = performance.now();
    const pool = await startTaskWorkers(system, queue, { queue: 'boots', executor: { placement: 'thread', module: moduleWith({ slow: '3000' }) }, concurrency: 4, pollMs: 20 });
    try {
      // Every host but the first waits 3 s before its module loads: the start did not wait for them.
      expect(performance.now() - started).toBeLessThan(2_500);
      expect(pool.stats().booting).toBe(3);
      const ids = await queue.enqueueMany('boots', Array.from({ length: 10 }, () => ({ name: 'boot' })));
      const records = await until(
        () => Promise.all(ids.map(({ id }) => queue.get(id))),
        (all) => all.every((found) => found?.state === 'succeeded'),
      );
      // All on the one host that is up, none queued behind a booting one.
      expect(records.map((found) => found?.result)).toEqual(ids.map(() => 1));
      expect(pool.stats().booting).toBe(3);
      expect(metricValue(await registry.metrics(), 'molo_task_host_boots_total{queue="boots",outcome="ok"}')).toBe(1);
      for (const deadline = Date.now() + 30_000; pool.stats().booting > 0 && Date.now() < deadline; ) await sleep(20);
      expect(pool.stats().booting).toBe(0);
      expect(metricValue(await registry.metrics(), 'molo_task_host_boots_total{queue="boots",outcome="ok"}')).toBe(4);
    } finally {
      await pool.stop(0);
      await queue.close();
      await system.shutdown();
    }
  }, 60_000);

  it('a later host that fails to boot restarts its worker; the pool stays up and every host comes up', async () => {
    const system = testSystem();
    const registry = new Registry();
    const queue = await sqlite.open(undefined, { metrics: registry });
    await queue.createQueue('flaky');
    const pool = await startTaskWorkers(system, queue, { queue: 'flaky', executor: { placement: 'thread', module: moduleWith({ failSecond: '1' }) }, concurrency: 3, pollMs: 20 });
    try {
      const ok = 'molo_task_host_boots_total{queue="flaky",outcome="ok"}';
      let text = '';
      for (const deadline = Date.now() + 30_000; !(metricValue(text, ok) >= 3) && Date.now() < deadline; ) {
        await sleep(20);
        text = await registry.metrics();
      }
      expect(metricValue(text, 'molo_task_host_boots_total{queue="flaky",outcome="failed"}')).toBe(1);
      expect(metricValue(text, ok)).toBe(3);
      expect(pool.stats()).toMatchObject({ workers: 3, booting: 0 });
      const { id } = await queue.enqueue('flaky', { name: 'noop' });
      expect((await until(() => queue.get(id), (found) => found?.state === 'succeeded'))?.state).toBe('succeeded');
    } finally {
      await pool.stop(0);
      await queue.close();
      await system.shutdown();
    }
  }, 60_000);

  it('the first host failing to boot fails the start with its cause', async () => {
    const system = testSystem();
    const queue = await sqlite.open();
    await queue.createQueue('broken');
    try {
      // Boot number 1 is claimed up front: the pool's first host is number 2, which fails.
      const module = moduleWith({ failSecond: '1' });
      writeFileSync(join(module.searchParams.get('dir')!, 'boot-1'), '');
      const start = startTaskWorkers(system, queue, { queue: 'broken', executor: { placement: 'thread', module }, concurrency: 3, pollMs: 20 });
      const error = await start.then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      // The supervisor's start wraps the pool's error (an exit reason that carries it): it is in there, whole.
      const text = inspect(error, { depth: 10 });
      expect(text).toContain(InvalidBusOption.code);
      expect(text).toMatch(/executor\.module.*boot number 2 fails on purpose/);
    } finally {
      await queue.close();
      await system.shutdown();
    }
  }, 60_000);
});
