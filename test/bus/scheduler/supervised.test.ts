/**
 * The scheduler actor under a node's root supervisor (real clock, SQLite): it leads, shows in the
 * admin tree's `schedulers` section, fires entries added through a handle that starts no actor,
 * comes back leading after a crash, and releases its lease when the node stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openScheduler, readLease, schedulerChild, schedulerProvider, type SchedulerStatus } from '../../../src/bus/index.js';
import { openKv } from '../../../src/data/kv/index.js';
import type { Ref } from '../../../src/actors/index.js';
import { Supervisor } from '../../../src/behaviours/index.js';
import { eventuallyAsync } from '../../data/kv/stores.js';
import { startTestNode } from '../../admin/helpers.js';
import { TASK_BACKENDS } from '../tasks/stores.js';

const sqlite = TASK_BACKENDS.find((backend) => backend.name === 'sqlite')!;

describe('scheduler under a supervisor', () => {
  beforeAll(() => sqlite.setup(), 30_000);
  afterAll(() => sqlite.teardown());

  it('leads, shows in the admin tree, fires, restarts after it or its lease is killed, releases its lease at stop', async () => {
    const queue = await sqlite.open();
    await queue.createQueue('q');
    const leaseStore = await openKv(sqlite.db, { table: 'sup_lease', sweepIntervalMs: 3_600_000 });
    const options = { db: sqlite.db, queue, leaseStore, name: 'supervised', table: 'sup_schedules' };
    const { node } = await startTestNode({ root: { intensity: 10, periodMs: 60_000, children: [schedulerChild('scheduler', options)] }, snapshotProviders: [schedulerProvider()] });
    try {
      const tree = async (): Promise<SchedulerStatus | undefined> => {
        const body = (await (await fetch(`${node.adminUrl!}/tree`)).json()) as { sections: { schedulers?: { value: SchedulerStatus }[] } };
        return body.sections.schedulers?.[0]?.value;
      };
      let shown: SchedulerStatus | undefined;
      await eventuallyAsync(async () => (shown = await tree())?.role === 'leader', 10_000, 'the scheduler to lead');
      expect(shown).toMatchObject({ name: 'supervised', fires: 0 });

      const handle = await openScheduler(node.system, { ...options, start: false });
      await handle.add({ id: 'soon', queue: 'q', task: { name: 'soon' }, schedule: { kind: 'at', runAt: Date.now() + 300 } });
      await eventuallyAsync(async () => (await queue.queueInfo('q')).depth === 1, 10_000, 'the entry to fire');
      expect(await handle.status()).toMatchObject({ role: 'leader', fires: 1 });

      // Killed: the supervisor restarts it, and it leads again with a newer token.
      const [child] = await Supervisor.whichChildren(node.system, node.root);
      node.system.exit(child!.ref as Ref, 'kill');
      await eventuallyAsync(async () => {
        const now = await tree();
        return now?.role === 'leader' && now.token! > shown!.token!;
      }, 20_000, 'the restarted scheduler to lead');
      await handle.add({ id: 'again', queue: 'q', task: { name: 'again' }, schedule: { kind: 'at', runAt: Date.now() + 300 } });
      await eventuallyAsync(async () => (await queue.queueInfo('q')).depth === 2, 10_000, 'the entry to fire after the restart');
      // Its lease actor killed: the scheduler goes down with it and is restarted whole.
      const before = await handle.status();
      node.system.exit(before.lease!, 'kill');
      await eventuallyAsync(async () => {
        const now = await tree();
        return now?.role === 'leader' && now.token! > before.token!;
      }, 20_000, 'the scheduler to lead again after its lease died');
      await handle.close();
    } finally {
      await node.stop();
    }
    // Stopped by its supervisor: the lease was released, not left to expire.
    expect(await readLease(leaseStore, 'molo:lease:supervised')).toBeUndefined();
    await leaseStore.close();
    await queue.close();
  }, 60_000);
});
