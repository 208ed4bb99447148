/**
 * Two processes sharing one Postgres store as competing workers of one consumer (StreamConsumer
 * actors, woken by NOTIFY only): every message is processed, none by both, except those a worker
 * held when it was SIGKILLed (redelivered after the ack deadline). A third worker replaces it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildForChildren } from './child-build.js';
import { eventually } from '../../support/systems.js';
import { eventuallyAsync } from '../../data/kv/stores.js';
import { publishMany, STREAM_BACKENDS } from './stores.js';

const TOTAL = 3_000;
let build: ReturnType<typeof buildForChildren>;

const backend = STREAM_BACKENDS.find((b) => b.name === 'postgres')!;

beforeAll(async () => {
  build = buildForChildren('test/bus/streams/fixtures/worker-child.ts');
  await backend.setup();
}, 60_000);
afterAll(async () => {
  await backend.teardown();
  build.remove();
}, 30_000);

interface Worker {
  readonly child: ChildProcess;
  readonly handled: number[];
  readonly ready: Promise<void>;
}

function startWorker(name: string, env: NodeJS.ProcessEnv): Worker {
  const child = spawn(process.execPath, [build.script], { env: { ...process.env, ...env, WORKER_NAME: name }, stdio: ['ignore', 'pipe', 'inherit'] });
  const handled: number[] = [];
  let buffer = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      if (line === 'READY') markReady();
      else if (line.startsWith('H ')) handled.push(Number(line.split(' ')[1]));
    }
  });
  return { child, handled, ready };
}

const exited = (child: ChildProcess): Promise<void> => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve())));

describe('competing workers in two processes on Postgres', () => {
  it('processes every message, none by both (only redeliveries after a kill)', async () => {
    const table = `work${process.pid}`;
    const store = await backend.open(undefined, { table });
    const env = { CRASH_PG_HOST: backend.pg!.host, CRASH_PG_PORT: String(backend.pg!.port), CRASH_PG_USER: backend.pg!.user, CRASH_PG_DB: backend.pg!.database, CRASH_TABLE: table };
    const workers: Worker[] = [];
    try {
      await store.createStream('work');
      workers.push(startWorker('a', env), startWorker('b', env));
      await Promise.all(workers.map((worker) => worker.ready));
      await publishMany(store, 'work', TOTAL / 2);
      await eventually(() => workers[0]!.handled.length > 100 && workers[1]!.handled.length > 100, 60_000, 'both working');
      // Kill one mid-way; a third takes its place.
      workers[0]!.child.kill('SIGKILL');
      await exited(workers[0]!.child);
      const killed = new Set(workers[0]!.handled);
      workers.push(startWorker('c', env));
      await publishMany(store, 'work', TOTAL / 2, TOTAL / 2);
      await eventuallyAsync(async () => {
        const info = await store.consumerInfo('work', 'workers');
        return info.lag === 0 && info.pending === 0;
      }, 120_000, 'all acked');

      const counts = new Map<number, number>();
      for (const worker of workers) for (const seq of worker.handled) counts.set(seq, (counts.get(seq) ?? 0) + 1);
      expect([...counts.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1));
      const duplicates = [...counts].filter(([, count]) => count > 1).map(([seq]) => seq);
      // Only what the killed worker held may come twice.
      expect(duplicates.filter((seq) => !killed.has(seq))).toEqual([]);
      expect(workers[1]!.handled.length).toBeGreaterThan(0);
      expect(workers[2]!.handled.length).toBeGreaterThan(0);
    } finally {
      for (const worker of workers) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((worker) => exited(worker.child)));
      await store.close();
    }
  }, 300_000);
});
