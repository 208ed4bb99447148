/**
 * A dynamic supervisor finds a child by value: `terminateChild` with a ref rebuilt from the child's
 * parts (after a JSON round trip) terminates that child, as the ref `startChild` returned does.
 */
import { describe, expect, it } from 'vitest';
import { parseRef, Ref } from '../../src/actors/index.js';
import { GenServer, Supervisor, worker } from '../../src/behaviours/index.js';
import { testSystem } from '../support/systems.js';

class Idle extends GenServer<'ping', string, never> {
  override handleCall(): string {
    return 'pong';
  }
}

describe('a dynamic supervisor and a ref rebuilt from its parts', () => {
  it.each([
    ['new Ref(node, id, creation)', (ref: Ref) => new Ref(ref.node, ref.id, ref.creation)],
    ['parseRef after a JSON round trip', (ref: Ref) => parseRef(JSON.parse(JSON.stringify(ref)) as string)],
  ])('terminateChild with %s terminates the child', async (_name, rebuild) => {
    const system = testSystem();
    const sup = await Supervisor.start(system, { strategy: 'simple_one_for_one', children: [worker('w', () => new Idle())] });
    const child = (await Supervisor.startChild(system, sup, []))!;
    const kept = (await Supervisor.startChild(system, sup, []))!;
    const outcome = await Supervisor.terminateChild(system, sup, rebuild(child)).then(
      () => 'resolved',
      (error: { code?: string }) => `rejected ${String(error.code)}`,
    );
    expect({ outcome, childAlive: system.isAlive(child), children: (await Supervisor.whichChildren(system, sup)).map((entry) => String(entry.ref)) }).toEqual({
      outcome: 'resolved',
      childAlive: false,
      children: [String(kept)],
    });
    await Supervisor.stop(system, sup);
  });
});
