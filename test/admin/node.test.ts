import { describe, expect, it } from 'vitest';
import { type Ref } from '../../src/actors/index.js';
import { AdminErrorCode, MAX_SHUTDOWN_DEADLINE_MS, startNode } from '../../src/admin/index.js';
import { BehaviourErrorCode, GenServer, worker } from '../../src/behaviours/index.js';
import { testSystem } from '../support/systems.js';
import { Counter, startTestNode } from './helpers.js';

/** Traps exits and never finishes its terminate: a child that ignores shutdown. */
class Stubborn extends GenServer {
  override init(): void {
    this.ctx.trapExit(true);
  }
  override terminate(): Promise<void> {
    return new Promise<void>(() => {});
  }
}

describe('startNode and graceful stop', () => {
  it('stops children in reverse start order, then the admin; stop is idempotent', async () => {
    const stops: string[] = [];
    const { node, events } = await startTestNode({
      root: { children: ['first', 'second', 'third'].map((id) => worker(id, () => new Counter(id, stops))) },
    });
    expect(node.system.whereis('root')).toEqual(node.root);
    const result = await node.stop();
    expect(result).toMatchObject({ clean: true, exitCode: 0, trigger: 'stop', rootExit: 'shutdown' });
    expect(stops).toEqual(['third', 'second', 'first']);
    expect(node.system.isAlive(node.admin)).toBe(false);
    expect(node.system.actorCount).toBe(0);
    expect(await node.stop()).toBe(result);
    expect(await node.stopped).toBe(result);
    expect(events.map((entry) => entry.event)).toEqual(['node.started', 'node.stopping', 'node.stopped']);
  });

  it('kills everything and reports exit code 1 when a child ignores shutdown past the deadline', async () => {
    const stops: string[] = [];
    const { node, events } = await startTestNode({
      root: {
        children: [
          worker('first', () => new Counter('first', stops)),
          worker('stubborn', () => new Stubborn(), { shutdown: 'infinity' }),
          worker('last', () => new Counter('last', stops)),
        ],
      },
      shutdownDeadlineMs: 150,
    });
    const started = Date.now();
    const result = await node.stop();
    expect(result).toMatchObject({ clean: false, exitCode: 1, rootExit: 'killed' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    // `last` stopped gracefully before the stubborn one blocked the rest; `first` was killed.
    expect(stops).toEqual(['last']);
    expect(node.system.stopped).toBe(true);
    expect(node.system.actorCount).toBe(0);
    const deadline = events.find((entry) => entry.event === 'node.deadline_exceeded');
    expect(deadline).toMatchObject({ level: 'error', fields: { deadlineMs: 150, cause: 'deadline' } });
  });

  it('installs SIGTERM and SIGINT handlers and removes them on stop', async () => {
    const before = [process.listenerCount('SIGTERM'), process.listenerCount('SIGINT')];
    const { node } = await startTestNode({ root: { children: [] }, signals: true, exitProcess: false });
    expect([process.listenerCount('SIGTERM'), process.listenerCount('SIGINT')]).toEqual([before[0]! + 1, before[1]! + 1]);
    await node.stop();
    expect([process.listenerCount('SIGTERM'), process.listenerCount('SIGINT')]).toEqual(before);
  });

  it('with onRootExit: stop, stops the node when the root gives up (exit code 1)', async () => {
    const { node, events } = await startTestNode({
      root: { intensity: 0, children: [worker('fragile', () => new Counter('fragile'))] },
      onRootExit: 'stop',
    });
    const fragile = node.system.processes().find((ref: Ref) => node.system.info(ref)?.behaviour === 'Counter')!;
    await expect(GenServer.call<Counter>(node.system, fragile, 'crash')).rejects.toThrow();
    const result = await node.stopped;
    expect(result).toMatchObject({ clean: true, exitCode: 1, trigger: 'root-exit' });
    expect(events.find((entry) => entry.event === 'node.root_exited')).toMatchObject({ level: 'error', fields: { action: 'stop' } });
    expect(node.system.actorCount).toBe(0);
  });

  it('by default keeps a node whose root exited up, health down', async () => {
    const { node } = await startTestNode({ root: { intensity: 0, children: [worker('fragile', () => new Counter('fragile'))] } });
    const fragile = node.system.processes().find((ref: Ref) => node.system.info(ref)?.behaviour === 'Counter')!;
    await expect(GenServer.call<Counter>(node.system, fragile, 'crash')).rejects.toThrow();
    await node.system.exited(node.root);
    expect(node.stopping).toBe(false);
    expect((await fetch(`${node.adminUrl}/health`)).status).toBe(503);
    expect(await node.stop()).toMatchObject({ clean: true, exitCode: 0, rootExit: 'noproc' });
  });

  it('rejects with ADMIN_NODE_START_FAILED when the root cannot start, leaving nothing behind', async () => {
    const system = testSystem();
    const events: string[] = [];
    const failing = startNode({
      system,
      admin: { port: 0 },
      signals: false,
      log: (_level, event) => events.push(event),
      root: {
        children: [
          worker('ok', () => new Counter()),
          {
            id: 'broken',
            start: () => {
              throw new Error('no database');
            },
          },
        ],
      },
    });
    const error = await failing.catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: AdminErrorCode.NodeStartFailed, node: 'test' });
    expect((error as Error).cause).toMatchObject({ code: BehaviourErrorCode.StartFailed });
    expect(system.actorCount).toBe(0);
    expect(events).toEqual([]);
  });

  it('creates and owns its system when given none, and shuts it down on stop', async () => {
    const node = await startNode({ node: 'own', root: { children: [worker('w', () => new Counter())] }, admin: false, signals: false, log: () => {} });
    expect(node.system.node).toBe('own');
    expect(node.system.actorCount).toBe(3);
    await node.stop();
    expect(node.system.stopped).toBe(true);
  });

  it('validates its options', async () => {
    const system = testSystem();
    const base = { system, signals: false, admin: false as const, root: { children: [] } };
    await expect(startNode({ ...base, shutdownDeadlineMs: 0 })).rejects.toMatchObject({ code: AdminErrorCode.InvalidOption, option: 'shutdownDeadlineMs' });
    await expect(startNode({ ...base, shutdownDeadlineMs: MAX_SHUTDOWN_DEADLINE_MS + 1 })).rejects.toMatchObject({ option: 'shutdownDeadlineMs' });
    await expect(startNode({ ...base, node: 'other' })).rejects.toMatchObject({ option: 'node' });
    await expect(startNode({ ...base, admin: { port: 70_000 } })).rejects.toMatchObject({ option: 'admin.port' });
    expect(system.actorCount).toBe(0);
  });
});
