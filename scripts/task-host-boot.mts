/**
 * How long a `thread` pool takes to come up (issue 28 §1): starts a pool of `concurrency` workers
 * on a SQLite queue with a TypeScript handlers module (run under tsx, as an app would), and prints
 * ms from the start call to the pool ready and to the first task's completion, then to all done.
 * A measurement, not a test or a benchmark of the steady rate (bench/tasks/thread-e2e.ts is that).
 *   npx tsx --conditions=molo-source scripts/task-host-boot.mts [concurrency] [prefetch|default] [tasks] [placement]
 * `MOLO_ROOT` runs another checkout's code (default: this one); `MOLO_BUILT=1` its built `dist/`
 * (after `npm run build`) instead of its sources, as an app that installed the package would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.env.MOLO_ROOT ?? new URL('../', import.meta.url).pathname;
const built = process.env.MOLO_BUILT === '1';
const entry = (area: string): string => pathToFileURL(join(root, built ? `dist/${area}/index.js` : `src/${area}/index.ts`)).href;
const { ActorSystem } = (await import(entry('actors'))) as typeof import('../src/actors/index.js');
const { openSqliteTaskQueue, startTaskWorkers } = (await import(entry('bus/tasks'))) as typeof import('../src/bus/tasks/index.js');

const concurrency = Number(process.argv[2] ?? 10);
const prefetchArg = process.argv[3] ?? 'default';
const prefetch = prefetchArg === 'default' ? undefined : Number(prefetchArg);
const n = Number(process.argv[4] ?? 100);
const placement = (process.argv[5] ?? 'thread') as 'thread' | 'process';

const system = new ActorSystem({ node: 'host-boot', logger: false });
const dir = mkdtempSync(join(tmpdir(), 'molo-host-boot-'));
const queue = await openSqliteTaskQueue(system, { file: join(dir, 'tasks.db') });
await queue.createQueue('boot');
await queue.enqueueMany('boot', Array.from({ length: n }, (_, i) => ({ name: 'noop', payload: { n: i } })));
const module = new URL('./fixtures/boot-handlers.mts', import.meta.url);

const started = performance.now();
const pool = await startTaskWorkers(system, queue, { queue: 'boot', concurrency, executor: prefetch === undefined ? { placement, module } : { placement, module, prefetch } });
const ready = performance.now() - started;
while (pool.stats().succeeded < 1) await new Promise((resolve) => setTimeout(resolve, 1));
const first = performance.now() - started;
while (pool.stats().succeeded < n) await new Promise((resolve) => setTimeout(resolve, 2));
const all = performance.now() - started;
const stats = pool.stats() as unknown as Record<string, unknown>;
await pool.stop(0);
await queue.close();
system.shutdown();
rmSync(dir, { recursive: true, force: true });
const ms = (value: number): number => Math.round(value);
console.log(JSON.stringify({ root, built, placement, concurrency, prefetch: prefetch ?? 'default', tasks: n, readyMs: ms(ready), firstTaskMs: ms(first), allDoneMs: ms(all), stats }));
process.exit(0);
