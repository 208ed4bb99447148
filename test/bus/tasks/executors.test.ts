import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { CalleeExited, hostsExited, placementHosts, type ActorSystem } from '../../../src/actors/index.js';
import {
  createEnvelope,
  createExecutor,
  PermanentTaskFailure,
  TASK_CAPS,
  TaskHandlerFailed,
  TaskHardTimeout,
  UnknownTaskHandler,
  type ExecutorSpec,
  type TaskExecutor,
  type TaskInput,
} from '../../../src/bus/tasks/index.js';
import { InvalidBusOption } from '../../../src/bus/index.js';
import { PlacedExecutor } from '../../../src/bus/tasks/executors/placed.js';
import { eventually, testSystem } from '../../support/systems.js';
import { handlers } from './fixtures/handlers.js';

const handlersModule = new URL('./fixtures/handlers.ts', import.meta.url);
const noHandlersModule = new URL('./fixtures/no-handlers.ts', import.meta.url);

type Placement = ExecutorSpec['placement'];
const PLACEMENTS: readonly Placement[] = ['loop', 'thread', 'process'];

const systems = new Set<ActorSystem>();
const executors = new Set<TaskExecutor>();
const pids = new Set<number>();

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function recordPids(system: ActorSystem): void {
  for (const host of placementHosts(system)) if (host.placement === 'process' && host.pid !== undefined) pids.add(host.pid);
}

function executor(placement: Placement): { system: ActorSystem; executor: TaskExecutor } {
  const system = testSystem({ node: 'tasks' });
  systems.add(system);
  const spec: ExecutorSpec = placement === 'loop' ? { placement, handlers } : { placement, module: handlersModule };
  const made = createExecutor(system, spec);
  executors.add(made);
  return { system, executor: made };
}

const task = (input: TaskInput) => createEnvelope({ timeoutSoftMs: 5_000, timeoutHardMs: 10_000, ...input });
const never = new AbortController().signal;

afterEach(async () => {
  for (const made of executors) await made.close();
  executors.clear();
  for (const system of systems) {
    // A closed executor leaves no host behind.
    await eventually(() => placementHosts(system).length === 0, 10_000, 'hosts to go');
    system.shutdown();
    await hostsExited(system);
  }
  systems.clear();
  await eventually(() => [...pids].every((pid) => !pidAlive(pid)), 10_000, 'host processes to exit');
  pids.clear();
});

describe.each(PLACEMENTS)('the %s executor', (placement) => {
  it('runs a handler; an unknown name is UnknownTaskHandler', async () => {
    const { executor: made } = executor(placement);
    expect(made.placement).toBe(placement);
    await made.run(task({ name: 'noop' }), never);
    await expect(made.run(task({ name: 'missing' }), never)).rejects.toBeInstanceOf(UnknownTaskHandler);
    // Inherited names are not handlers.
    await expect(made.run(task({ name: 'toString' }), never)).rejects.toMatchObject({ code: UnknownTaskHandler.code, taskName: 'toString' });
    await made.run(task({ name: 'noop' }), never);
  });

  it('the soft timeout aborts the handler signal; so does the run signal', async () => {
    const { executor: made } = executor(placement);
    const started = Date.now();
    await expect(made.run(task({ name: 'awaitAbort', timeoutSoftMs: 200, timeoutHardMs: 10_000 }), never)).rejects.toThrow(
      'aborted: soft timeout after 200 ms',
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    const cancel = new AbortController();
    const run = made.run(task({ name: 'awaitAbort' }), cancel.signal);
    setTimeout(() => cancel.abort(new Error('cancelled by the test')), 100);
    await expect(run).rejects.toThrow('aborted: cancelled by the test');
    const early = new AbortController();
    early.abort(new Error('already cancelled'));
    await expect(made.run(task({ name: 'awaitAbort' }), early.signal)).rejects.toThrow('aborted: already cancelled');
  });

  it('a signal first read after the soft timeout, or after the run signal aborted, is aborted already', async () => {
    const { executor: made } = executor(placement);
    await expect(made.run(task({ name: 'readSignalLate', payload: 250, timeoutSoftMs: 100, timeoutHardMs: 10_000 }), never)).rejects.toThrow(
      'aborted late: soft timeout after 100 ms',
    );
    await made.run(task({ name: 'readSignalLate', payload: 20, timeoutSoftMs: 10_000, timeoutHardMs: 10_000 }), never);
    const cancel = new AbortController();
    const run = made.run(task({ name: 'readSignalLate', payload: 250, timeoutSoftMs: 10_000, timeoutHardMs: 10_000 }), cancel.signal);
    setTimeout(() => cancel.abort(new Error('cancelled by the test')), 50);
    await expect(run).rejects.toThrow('aborted late: cancelled by the test');
  });

  it('errors keep their name, code and message; a non-Error is TaskHandlerFailed; PermanentTaskFailure stays itself', async () => {
    const { executor: made } = executor(placement);
    const coded = await made.run(task({ name: 'throwCoded' }), never).catch((error: unknown) => error);
    expect(coded).toBeInstanceOf(Error);
    expect(coded).toMatchObject({ name: 'RangeError', code: 'E_CUSTOM', message: 'out of range' });
    const thrown = await made.run(task({ name: 'throwString' }), never).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(TaskHandlerFailed);
    expect(thrown).toMatchObject({ code: TaskHandlerFailed.code, taskName: 'throwString', thrown: '"not an Error"' });
    const permanent = await made.run(task({ name: 'permanent' }), never).catch((error: unknown) => error);
    expect(permanent).toBeInstanceOf(PermanentTaskFailure);
    expect((permanent as Error).message).toBe('no retry will help');
  });

  it('a payload at exactly the 1 MiB cap, multi-byte, arrives intact', async () => {
    const { executor: made } = executor(placement);
    // `{"sha256":"<64>","text":"…"}`: 79 bytes of frame around the text, whose characters take 3, 2 and 1 bytes.
    const fixed = JSON.stringify({ sha256: '0'.repeat(64), text: '' }).length;
    let room = TASK_CAPS.maxPayloadBytes - fixed;
    const euros = Math.floor((room - 2) / 3);
    room -= euros * 3;
    const text = '€'.repeat(euros) + 'é'.repeat(Math.floor(room / 2)) + 'x'.repeat(room % 2);
    const payload = { sha256: createHash('sha256').update(text).digest('hex'), text };
    expect(Buffer.byteLength(JSON.stringify(payload))).toBe(TASK_CAPS.maxPayloadBytes);
    await made.run(task({ name: 'verify', payload }), never);
    // And a change would be seen: the check is real.
    await expect(made.run(task({ name: 'verify', payload: { ...payload, text: `${text.slice(1)}x` } }), never)).rejects.toThrow(
      'payload changed on the way',
    );
  });
});

describe.each(['thread', 'process'] as const)('the %s executor at the hard timeout', (placement) => {
  it('terminates a host in an endless CPU loop, starts a fresh one, and runs the next task', async () => {
    const { system, executor: made } = executor(placement);
    await (made as PlacedExecutor).ready();
    recordPids(system);
    const [before] = placementHosts(system);
    expect(before).toBeDefined();
    const started = Date.now();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const error = await made.run(task({ name: 'spin', timeoutSoftMs: 100, timeoutHardMs: 500 }), never).catch((thrown: unknown) => thrown);
    clearInterval(timer);
    expect(error).toBeInstanceOf(TaskHardTimeout);
    expect(error).toMatchObject({ code: TaskHardTimeout.code, timeoutMs: 500 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(490);
    // The main loop kept running while the host spun.
    expect(ticks).toBeGreaterThan(20);
    if (placement === 'process') expect(pidAlive(before!.pid!)).toBe(false);
    // A fresh host is started at once: the worker is ready again without waiting for its next task.
    await eventually(() => placementHosts(system).some((host) => host.creation !== before!.creation), 10_000, 'a fresh host');
    recordPids(system);
    expect(placementHosts(system).map((host) => host.creation)).not.toContain(before!.creation);
    await made.run(task({ name: 'noop' }), never);
    await made.run(task({ name: 'sleep', payload: 20 }), never);
    expect(placementHosts(system)).toHaveLength(1);
  });

  it('a handler that exits its host fails its run; the next run gets a fresh host', async () => {
    const { system, executor: made } = executor(placement);
    await (made as PlacedExecutor).ready();
    recordPids(system);
    const [before] = placementHosts(system);
    const crashed = await made.run(task({ name: 'exitHost' }), never).catch((error: unknown) => error);
    expect(crashed).toBeInstanceOf(CalleeExited);
    const exit = placement === 'thread' ? { thread_exit: 3 } : { process_exit: 3, signal: null };
    expect((crashed as CalleeExited).reason).toEqual({ shutdown: exit });
    await made.run(task({ name: 'noop' }), never);
    recordPids(system);
    expect(placementHosts(system).map((host) => host.creation)).not.toContain(before!.creation);
  });
});

describe('the loop executor at the hard timeout', () => {
  it('abandons a handler that never settles', async () => {
    const { executor: made } = executor('loop');
    await expect(made.run(task({ name: 'hang', timeoutSoftMs: 50, timeoutHardMs: 200 }), never)).rejects.toBeInstanceOf(TaskHardTimeout);
    await made.run(task({ name: 'noop' }), never);
  });
});

describe('a placed executor with a bad module', () => {
  it.each(['thread', 'process'] as const)('%s: a module without `handlers` is InvalidBusOption naming executor.module', async (placement) => {
    const system = testSystem({ node: 'tasks' });
    systems.add(system);
    const made = createExecutor(system, { placement, module: noHandlersModule });
    executors.add(made);
    const error = await made.run(task({ name: 'noop' }), never).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(InvalidBusOption);
    expect(error).toMatchObject({ option: 'executor.module' });
    expect((error as Error).message).toContain("exports no 'handlers'");
    await expect(made.run(task({ name: 'noop' }), never)).rejects.toBeInstanceOf(InvalidBusOption);
    // The unusable host was ended, not left idle.
    await eventually(() => placementHosts(system).length === 0, 10_000, 'the host to go');
  });

  it('a module that cannot be imported, an unknown placement, a closed executor: typed errors', async () => {
    const system = testSystem({ node: 'tasks' });
    systems.add(system);
    const missing = createExecutor(system, { placement: 'thread', module: new URL('./fixtures/absent.ts', import.meta.url) });
    executors.add(missing);
    await expect(missing.run(task({ name: 'noop' }), never)).rejects.toMatchObject({ code: InvalidBusOption.code, option: 'executor.module' });
    expect(() => createExecutor(system, { placement: 'gpu' } as unknown as ExecutorSpec)).toThrow(InvalidBusOption);
    expect(() => createExecutor(system, { placement: 'process', module: './fixtures/handlers.ts' })).toThrow(/executor\.module.*relative/);
    const closed = createExecutor(system, { placement: 'thread', module: handlersModule });
    await closed.close();
    await expect(closed.run(task({ name: 'noop' }), never)).rejects.toMatchObject({ option: 'executor' });
  });
});
