/**
 * `openScheduler` starts its scheduler actor supervised: the handle's `ref` is a supervisor that
 * restarts a crashed scheduler, which takes its lead back and goes on firing, each fire once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Ref } from '../../../src/actors/index.js';
import { Supervisor } from '../../../src/behaviours/index.js';
import { schedulerServerName } from '../../../src/bus/scheduler/scheduler-actor.js';
import { eventually } from '../../support/systems.js';
import { TASK_BACKENDS } from '../tasks/stores.js';
import { harness, type Harness } from './harness.js';

const MINUTE = 60_000;
const backend = TASK_BACKENDS[0]!;

describe(`openScheduler supervises its actor (${backend.name})`, () => {
  let h: Harness | undefined;
  beforeAll(() => backend.setup(), 30_000);
  afterAll(() => backend.teardown());
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a killed scheduler is restarted by its supervisor and keeps firing, once per due time', async () => {
    h = await harness(backend);
    await h.lead();
    const supervisor = h.scheduler.ref!;
    const [child] = await Supervisor.whichChildren(h.system, supervisor);
    expect(child).toMatchObject({ id: 'scheduler', type: 'worker' });
    const first = child!.ref as Ref;
    expect(h.system.whereis(schedulerServerName(h.name))).toBe(first);
    await h.scheduler.add({ id: 'every', queue: 'q', task: { name: 'tick' }, schedule: { kind: 'interval', everyMs: MINUTE } });
    for (let s = 0; s < 60; s++) await h.step();
    const before = (await h.queue.list('q', { limit: 100 })).length;
    expect(before).toBe(1);

    h.system.exit(first, 'kill');
    await eventually(() => {
      const now = h!.system.whereis(schedulerServerName(h!.name));
      return now !== undefined && now !== first;
    }, 5_000, 'scheduler restarted');
    expect(h.system.isAlive(supervisor)).toBe(true);
    await h.lead();
    for (let s = 0; s < 60; s++) await h.step();
    const after = await h.queue.list('q', { limit: 100 });
    // One more fire for the next minute: none lost to the crash, none doubled by the restart.
    expect(after.length).toBe(2);
    expect(new Set(after.map((task) => task.envelope.idempotency_key)).size).toBe(2);
  }, 60_000);
});
