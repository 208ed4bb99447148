import { describe, expect, it } from 'vitest';
import { behaviourModule, placementHosts, type Ref } from '../../src/actors/index.js';
import { GenServer, Supervisor, type ChildSpec } from '../../src/behaviours/index.js';
import type { Counter } from '../actors/placement/fixtures/counter.js';
import { checkPlacementLeaks, counterModule, HOST_PLACEMENTS } from '../actors/placement/support.js';
import { eventually, testSystem } from '../support/systems.js';

checkPlacementLeaks();

/** A supervisor keeps children placed in worker threads and child processes alive like local ones. */
describe.each(HOST_PLACEMENTS)('supervised children placed in a %s', (placement) => {
  const counterChild = (id: string, restart: ChildSpec['restart'] = 'permanent'): ChildSpec => ({
    id,
    restart,
    start: ({ system, parent }) =>
      GenServer.startPlaced(system, behaviourModule<Counter>(counterModule, 'counter', 1), { placement, link: parent }),
  });

  const childRef = async (system: ReturnType<typeof testSystem>, supervisor: Ref): Promise<Ref> => {
    const [entry] = await Supervisor.whichChildren(system, supervisor);
    return entry!.ref as Ref;
  };

  /** Polls the supervisor until its child is a running actor other than `previous`. */
  const replacementOf = async (system: ReturnType<typeof testSystem>, supervisor: Ref, previous: Ref): Promise<Ref> => {
    for (let attempt = 0; attempt < 400; attempt++) {
      const [entry] = await Supervisor.whichChildren(system, supervisor);
      if (typeof entry?.ref === 'object' && !entry.ref.equals(previous)) return entry.ref;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('the child was not restarted within 10 s');
  };

  it('restarts a placed child that crashes, with a fresh state', async () => {
    const system = testSystem({ node: 'sup' });
    const supervisor = await Supervisor.start(system, { intensity: 5, children: [counterChild('counter')] });
    const first = await childRef(system, supervisor);
    expect(first.creation).not.toBe(system.creation);
    expect(await GenServer.call(system, first, { add: 4 })).toBe(5);
    await GenServer.call(system, first, 'crash').catch(() => undefined);
    await eventually(() => !system.isAlive(first));
    const second = await replacementOf(system, supervisor, first);
    expect(await GenServer.call(system, second, 'get')).toBe(1);
    const [status] = (await Supervisor.status(system, supervisor)).children;
    expect(status).toMatchObject({ state: 'running', restartCount: 1 });
    expect(await Supervisor.stop(system, supervisor)).toBe('shutdown');
  });

  it('turns the death of the host into an exit and restarts the child in a new host', async () => {
    const system = testSystem({ node: 'sup' });
    const supervisor = await Supervisor.start(system, { intensity: 5, children: [counterChild('counter')] });
    const first = await childRef(system, supervisor);
    const [host] = placementHosts(system);
    expect(host).toBeDefined();
    const monitorSeen = system.exited(first);
    if (placement === 'process') process.kill(host!.pid!, 'SIGKILL');
    else await GenServer.call(system, first, 'crash').catch(() => undefined);
    const reason = await monitorSeen;
    if (placement === 'process') expect(reason).toMatchObject({ shutdown: { process_exit: null, signal: 'SIGKILL' } });
    const second = await replacementOf(system, supervisor, first);
    expect(await GenServer.call(system, second, { add: 1 })).toBe(2);
    expect(await Supervisor.stop(system, supervisor)).toBe('shutdown');
  });
});
