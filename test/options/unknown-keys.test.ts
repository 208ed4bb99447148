/**
 * A misspelt option is refused, naming the nearest known one, on every public options object that
 * had ignored it (issue probes: `period` for `periodMs` in a supervisor spec, `maxAge` for
 * `maxAgeMs` in a stream config), through the public APIs, on a real SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorSystem } from '../../src/actors/index.js';
import { Supervisor } from '../../src/behaviours/index.js';
import { createBroker, openScheduler, openSqliteStreams, openTaskQueue, startTaskWorkers, type SqlStreamStore, type SqlTaskQueue } from '../../src/bus/index.js';
import { openSqlite, type Database } from '../../src/data/index.js';
import { startNode } from '../../src/admin/index.js';

let dir: string;
let system: ActorSystem;
let db: Database;
let streams: SqlStreamStore;
let queue: SqlTaskQueue;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'molo-option-keys-'));
  // One system for the file (its stores live across the tests), so not the per-test leak check's.
  system = new ActorSystem({ node: 'keys', logger: false });
  db = await openSqlite(system, { file: join(dir, 'app.db'), readers: 0 });
  streams = await openSqliteStreams(system, { file: join(dir, 'streams.db'), readers: 0 });
  queue = await openTaskQueue(db);
  await queue.createQueue('q');
});

afterAll(async () => {
  await streams?.close();
  await queue?.close();
  await db?.close();
  await system?.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

describe('unknown option keys', () => {
  it('a supervisor spec: `period` is refused, naming periodMs', async () => {
    expect(() => Supervisor.start(system, { strategy: 'one_for_one', period: 5_000, children: [] } as never)).toThrow(
      expect.objectContaining({
      code: 'SUP_INVALID_FLAGS',
      option: 'period',
        message: expect.stringContaining('did you mean periodMs?'),
      }),
    );
  });

  it('a stream config: `maxAge` is refused, naming maxAgeMs; a consumer config likewise', async () => {
    await expect(streams.createStream('orders', { maxAge: 60_000 } as never)).rejects.toMatchObject({ code: 'STREAM_INVALID_ARGUMENT', message: expect.stringContaining('did you mean maxAgeMs?') });
    await streams.createStream('orders', { maxAgeMs: 60_000 });
    await expect(streams.createConsumer('orders', 'c', { ackWait: 1_000 } as never)).rejects.toThrow(/did you mean ackWaitMs\?/);
  });

  it('a topic broker, a task queue config, a worker pool and the scheduler', async () => {
    expect(() => createBroker({ queueCapcity: 8 } as never)).toThrow(/broker\.queueCapcity.*did you mean queueCapacity\?/);
    await expect(queue.createQueue('r', { maxDeph: 10 } as never)).rejects.toThrow(/queue config\.maxDeph.*did you mean maxDepth\?/);
    await expect(startTaskWorkers(system, queue, { queue: 'q', executor: { placement: 'loop', handlers: {} }, concurency: 2 } as never)).rejects.toThrow(/did you mean concurrency\?/);
    await expect(openScheduler(system, { queue, tickMS: 1_000 } as never)).rejects.toThrow(/scheduler\.tickMS.*did you mean tickMs\?/);
  });

  it('a child spec (and its backoff): `restarts` is refused, naming restart', async () => {
    const start = () => undefined;
    expect(() => Supervisor.start(system, { strategy: 'one_for_one', children: [{ id: 'w', start, restarts: 'temporary' } as never] })).toThrow(
      expect.objectContaining({ code: 'SUP_INVALID_SPEC', message: expect.stringContaining('restarts: unknown option; did you mean restart?') }),
    );
    expect(() =>
      Supervisor.start(system, { strategy: 'one_for_one', children: [{ id: 'w', start, backoff: { initialMs: 10, maxMS: 100 } } as never] }),
    ).toThrow(/backoff\.maxMS.*did you mean maxMs\?/);
  });

  it('the actor system: `callTimeout` is refused, naming callTimeoutMs', () => {
    expect(() => new ActorSystem({ node: 'x', callTimeout: 1_000 } as never)).toThrow(
      expect.objectContaining({ code: 'ACTOR_INVALID_OPTION', option: 'callTimeout', message: expect.stringContaining('did you mean callTimeoutMs?') }),
    );
  });

  it('startNode: a node option, an admin surface option and a snapshot option', async () => {
    const root = { strategy: 'one_for_one' as const, children: [] };
    await expect(startNode({ system, root, signals: false, shutdownDeadline: 1_000 } as never)).rejects.toThrow(/shutdownDeadline.*did you mean shutdownDeadlineMs\?/);
    await expect(startNode({ system, root, signals: false, admin: { prot: 0 } } as never)).rejects.toThrow(/admin\.prot.*did you mean port\?/);
    await expect(startNode({ system, root, signals: false, admin: false, snapshot: { maxSnapshotByte: 1 } } as never)).rejects.toThrow(
      /snapshot\.maxSnapshotByte.*did you mean maxSnapshotBytes\?/,
    );
  });
});
