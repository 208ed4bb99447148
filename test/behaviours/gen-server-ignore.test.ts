/**
 * OTP's `ignore` from a GenServer's init: no server runs, terminate does not run; under a
 * supervisor the child is recorded as not started (its spec kept for a static child, as OTP keeps
 * one), and a direct start rejects with StartIgnored.
 */
import { describe, expect, it } from 'vitest';
import { GenServer, StartIgnored, Supervisor, worker } from '../../src/behaviours/index.js';
import { testSystem } from '../support/systems.js';

class Optional extends GenServer<'ping', string> {
  static terminated = 0;
  constructor(private readonly enabled: boolean) {
    super();
  }
  override async init(): Promise<void> {
    await Promise.resolve();
    if (!this.enabled) this.ignore();
  }
  override handleCall(): string {
    return 'pong';
  }
  override terminate(): void {
    Optional.terminated++;
  }
}

describe('GenServer init answering ignore', () => {
  it('a direct start rejects with StartIgnored; no actor is left and terminate did not run', async () => {
    const system = testSystem();
    Optional.terminated = 0;
    const error = await GenServer.start(system, () => new Optional(false), { name: 'optional' }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(StartIgnored);
    expect(error).toMatchObject({ code: 'BEHAVIOUR_START_IGNORED', behaviour: 'Optional' });
    expect(system.whereis('optional')).toBeUndefined();
    expect(system.actorCount).toBe(0);
    expect(Optional.terminated).toBe(0);
    // The name is free again, and a server that does not ignore starts under it.
    const ref = await GenServer.start(system, () => new Optional(true), { name: 'optional' });
    expect(await GenServer.call(system, ref, 'ping')).toBe('pong');
    await GenServer.stop(system, ref);
    await system.shutdown();
  });

  it('under a supervisor the child is recorded as not started, and its siblings run', async () => {
    const system = testSystem();
    const root = (await Supervisor.start(system, {
      strategy: 'one_for_one',
      children: [worker('off', () => new Optional(false)), worker('on', () => new Optional(true))],
    }))!;
    const children = await Supervisor.whichChildren(system, root);
    const byId = new Map(children.map((child) => [child.id, child]));
    expect(byId.get('off')?.ref).toBeUndefined();
    expect(byId.get('on')?.ref).toBeDefined();
    expect(await GenServer.call(system, byId.get('on')!.ref!, 'ping')).toBe('pong');
    await Supervisor.stop(system, root);
    await system.shutdown();
  });
});
