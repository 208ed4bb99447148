import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from './src/actors/index.js';
import { openTaskQueue, openSqliteTaskQueue, startTaskWorkers } from './src/bus/index.js';
import { createPostgresPool } from './src/data/postgres.js';
const N = 10_000;
const system = new ActorSystem({ node: 'b', logger: false });
for (const backend of process.argv.slice(2)) {
  const table = `b${Date.now()}`;
  const queue = backend === 'pg'
    ? await openTaskQueue(await createPostgresPool(system, { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test', min: 4, max: 8 }), { table })
    : await openSqliteTaskQueue(system, { file: join(mkdtempSync(join(tmpdir(), 'tqb-')), 't.db') }, { table });
  await queue.createQueue('q');
  const stats: Record<string, [number, number, number]> = {};
  for (const m of ['settle', 'markRunning', 'lease', 'expireLeases', 'queueInfo', 'heartbeat']) {
    const orig = (queue as any)[m].bind(queue);
    stats[m] = [0, 0, 0];
    (queue as any)[m] = async (...a: any[]) => { const t0 = performance.now(); const r = await orig(...a); stats[m][0]++; stats[m][1] += Array.isArray(a[1]) ? a[1].length : (Array.isArray(r) ? r.length : 0); stats[m][2] += performance.now() - t0; return r; };
  }
  let t = performance.now();
  const all = [];
  for (let i = 0; i < N; i++) all.push(queue.enqueue('q', { name: 'noop', payload: i }));
  await Promise.all(all);
  const enq = N / ((performance.now() - t) / 1000);
  let done = 0;
  let resolve!: () => void;
  const finished = new Promise<void>((r) => (resolve = r));
  t = performance.now();
  const pool = await startTaskWorkers(system, queue, { queue: 'q', concurrency: 10, batch: 50, executor: { placement: 'loop', handlers: { noop: () => { if (++done === N) resolve(); } } } });
  await finished;
  const e2e = N / ((performance.now() - t) / 1000);
  await pool.stop(1000);
  console.log(JSON.stringify(stats));
  console.log(backend, 'enqueue/s', enq.toFixed(0), 'process/s', e2e.toFixed(0));
  await queue.close();
}
system.shutdown();
process.exit(0);
