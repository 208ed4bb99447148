import { describe, expect, it } from 'vitest';
import { behaviourModule, CalleeExited, shutdownWith } from '../../../src/actors/index.js';
import { GenServer } from '../../../src/behaviours/gen-server.js';
import { StartFailed } from '../../../src/behaviours/errors.js';
import type { Counter } from './fixtures/counter.js';
import { checkPlacementLeaks, counterModule, HOST_PLACEMENTS, placementSystem } from './support.js';
import { recorder } from '../helpers.js';
import { eventually } from '../../support/systems.js';

checkPlacementLeaks();

describe.each(HOST_PLACEMENTS)('a GenServer in a %s', (placement) => {
  it('startPlaced, typed calls, casts and stop', async () => {
    const system = placementSystem();
    const server = await GenServer.startPlaced(system, behaviourModule<Counter>(counterModule, 'counter', 10), { placement, name: 'counter' });
    expect(server.creation).not.toBe(system.creation);
    const total: number = await GenServer.call(system, server, { add: 5 });
    expect(total).toBe(15);
    GenServer.cast(system, server, { add: 2 });
    expect(await GenServer.call(system, server, 'get')).toBe(17);
    expect(await GenServer.call(system, 'counter', 'get')).toBe(17);
    const { ref: terminations, seen } = recorder(system, { name: 'terminations' });
    expect(await GenServer.stop(system, server, shutdownWith('enough'))).toEqual({ shutdown: 'enough' });
    // terminate ran in the host, with the reason, and reached a main actor by name.
    await eventually(() => seen.length === 1);
    expect(seen).toEqual([{ count: 17, reason: { shutdown: 'enough' } }]);
    system.exit(terminations, 'kill');
  });

  it('a crash in handleCall fails the call with CalleeExited and the error', async () => {
    const system = placementSystem();
    const server = await GenServer.startPlaced(system, behaviourModule<Counter>(counterModule, 'counter'), { placement });
    const error = (await GenServer.call(system, server, 'crash').catch((e: unknown) => e)) as CalleeExited;
    expect(error).toBeInstanceOf(CalleeExited);
    expect((error.reason as Error).message).toBe('counter crashed');
  });

  it('an init that fails rejects with StartFailed', async () => {
    const system = placementSystem();
    const error = (await GenServer.startPlaced(system, behaviourModule<Counter>(counterModule, 'counter', -1), { placement }).catch(
      (e: unknown) => e,
    )) as StartFailed;
    expect(error).toBeInstanceOf(StartFailed);
    expect((error.reason as Error).message).toBe('negative start');
  });

  it('a trapping server stops with its parent (the linked starter) reason', async () => {
    const system = placementSystem();
    const { ref: parent } = recorder(system);
    const server = await GenServer.startPlaced(system, behaviourModule<Counter>(counterModule, 'counter'), {
      placement,
      link: parent,
      trapExit: true,
    });
    const exited = system.exited(server);
    system.exit(parent, 'shutdown');
    expect(await exited).toBe('shutdown');
  });
});
