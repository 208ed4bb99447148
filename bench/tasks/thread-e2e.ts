/**
 * End to end with `thread` (or `process`) handlers alone, for profiling and A/B runs: enqueue n
 * no-op tasks on a SQLite queue, then time a pool of `concurrency` workers until all succeeded.
 * `MOLO_ROOT` points at another checkout's root to run its sources (default: this one).
 *   npx tsx --conditions=molo-source bench/tasks/thread-e2e.ts [n] [concurrency] [placement] [prefetch]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.env.MOLO_ROOT ?? new URL('../../', import.meta.url).pathname;
const n = Number(process.argv[2] ?? 5_000);
const concurrency = Number(process.argv[3] ?? 10);
const placement = (process.argv[4] ?? 'thread') as 'thread' | 'process';
/** Tasks per host at once; ignored by a checkout without the option. */
const prefetch = Number(process.argv[5] ?? 1);
const { ActorSystem } = (await import(pathToFileURL(join(root, 'src/actors/index.ts')).href)) as typeof import('../../src/actors/index.js');
const tasks = (await import(pathToFileURL(join(root, 'src/bus/tasks/index.ts')).href)) as typeof import('../../src/bus/tasks/index.js');

const system = new ActorSystem({ node: 'thread-e2e', logger: false });
const dir = mkdtempSync(join(tmpdir(), 'molo-thread-e2e-'));
const queue = await tasks.openSqliteTaskQueue(system, { file: join(dir, 'tasks.db') });
await queue.createQueue('bench');
for (let i = 0; i < n; i += 1_000) await queue.enqueueMany('bench', Array.from({ length: Math.min(1_000, n - i) }, () => ({ name: 'noop' })));
const module = new URL('../../test/bus/tasks/fixtures/handlers.ts', pathToFileURL(root + '/').href.replace(/\/?$/, '/') + 'bench/tasks/');
const started = performance.now();
const pool = await tasks.startTaskWorkers(system, queue, { queue: 'bench', executor: { placement, module, prefetch }, concurrency, batch: 100 });
// Hosts start slowly under load: the steady rate is timed from the moment every worker ran a task or two.
const warm = Math.min(n / 2, concurrency * 20);
while (pool.stats().succeeded < warm) await new Promise((resolve) => setTimeout(resolve, 2));
const steadyFrom = performance.now();
// CPU of the whole process, every thread (hosts included for `thread`): less noisy than rates on a loaded machine.
const cpuFrom = process.cpuUsage();
while (pool.stats().succeeded < n) await new Promise((resolve) => setTimeout(resolve, 5));
const ended = performance.now();
const cpu = process.cpuUsage(cpuFrom);
const cpuUsPerTask = Math.round((cpu.user + cpu.system) / (n - warm));
const seconds = (ended - started) / 1_000;
const steady = Math.round((n - warm) / ((ended - steadyFrom) / 1_000));
await pool.stop(0);
await queue.close();
system.shutdown();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ root, placement, n, concurrency, prefetch, seconds: Number(seconds.toFixed(2)), perSecond: Math.round(n / seconds), steady, cpuUsPerTask }));
process.exit(0);
