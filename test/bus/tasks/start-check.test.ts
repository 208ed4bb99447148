/**
 * A pool checks its handlers before it reports ready: a handlers module that does not load or
 * exports no `handlers`, or handlers lacking a name the pool's filter or the queue's waiting tasks
 * use, fail `startTaskWorkers` with the cause, and no task is taken (so none is retried or
 * dead-lettered because of a typo).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTaskWorkers, type TaskWorkers } from '../../../src/bus/index.js';
import { testSystem } from '../../support/systems.js';
import { TASK_BACKENDS } from './stores.js';

const handlersModule = new URL('./fixtures/handlers.ts', import.meta.url);
const noHandlersModule = new URL('./fixtures/no-handlers.ts', import.meta.url);
const missingModule = new URL('./fixtures/no-such-module.ts', import.meta.url);

const running: TaskWorkers[] = [];
afterEach(async () => {
  for (const pool of running.splice(0)) await pool.stop(0);
});

const backend = TASK_BACKENDS.find((candidate) => candidate.name === 'sqlite')!;

describe('startTaskWorkers checks its handlers first', () => {
  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown());

  it.each([
    ['a module that does not exist', missingModule, /could not be imported/],
    ['a module without `handlers`', noHandlersModule, /exports no 'handlers'/],
  ])('thread executor with %s: the start fails with the cause, and the waiting task is untouched', async (_, module, cause) => {
    const system = testSystem();
    const queue = await backend.open();
    await queue.createQueue('q');
    const { id } = await queue.enqueue('q', { name: 'noop' });
    const started = startTaskWorkers(system, queue, { queue: 'q', executor: { placement: 'thread', module }, concurrency: 1, pollMs: 10 });
    const error = await started.then((pool) => (running.push(pool), undefined), (thrown: unknown) => thrown);
    expect(error, 'startTaskWorkers must reject').toBeDefined();
    expect(describeChain(error)).toMatch(cause);
    const record = await queue.get(id);
    expect(record?.state).toBe('queued');
    expect(record?.envelope.attempts).toBe(0);
    expect((await queue.queueInfo('q')).deadLetters).toBe(0);
    expect(system.actorCount).toBe(0);
    await queue.close();
    await system.shutdown();
  });

  it('loop handlers lacking the name of a waiting task: refused, naming it', async () => {
    const system = testSystem();
    const queue = await backend.open();
    await queue.createQueue('q');
    await queue.enqueue('q', { name: 'send-email' });
    const error = await startTaskWorkers(system, queue, { queue: 'q', executor: { placement: 'loop', handlers: { sendEmail: () => undefined } }, pollMs: 10 }).catch((thrown: unknown) => thrown);
    expect(describeChain(error)).toMatch(/no handler for 'send-email', named by tasks waiting in queue 'q'/);
    expect((await queue.queueInfo('q')).counts.queued).toBe(1);
    await queue.close();
    await system.shutdown();
  });

  it('a `names` filter naming a handler the module lacks: refused', async () => {
    const system = testSystem();
    const queue = await backend.open();
    await queue.createQueue('q');
    const error = await startTaskWorkers(system, queue, { queue: 'q', names: ['noop', 'nope'], executor: { placement: 'thread', module: handlersModule }, concurrency: 1, pollMs: 10 }).catch((thrown: unknown) => thrown);
    expect(describeChain(error)).toMatch(/no handler for 'nope'/);
    await queue.close();
    await system.shutdown();
  });

  it('a good module starts and runs what waits', async () => {
    const system = testSystem();
    const queue = await backend.open();
    await queue.createQueue('q');
    const { id } = await queue.enqueue('q', { name: 'noop' });
    running.push(await startTaskWorkers(system, queue, { queue: 'q', executor: { placement: 'thread', module: handlersModule }, concurrency: 2, pollMs: 10 }));
    let record = await queue.get(id);
    for (let i = 0; i < 500 && record?.state !== 'succeeded'; i++) record = await new Promise((resolve) => setTimeout(resolve, 20)).then(() => queue.get(id));
    expect(record?.state).toBe('succeeded');
    await running.pop()!.stop(0);
    await queue.close();
    await system.shutdown();
  });
});

/** The error's message and its causes' (a supervisor start wraps the child's error). */
function describeChain(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current !== undefined && depth < 6; depth++) {
    parts.push(current instanceof Error ? `${(current as { code?: string }).code ?? current.name}: ${current.message}` : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(' <- ');
}
