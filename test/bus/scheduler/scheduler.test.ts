/**
 * The scheduler service over the real task queue, on SQLite and Postgres, driven by a simulated
 * clock one tick (1 s) at a time: periodic and cron fires, one-shot delayed tasks, missed-fire
 * policies across a restart, the fencing refusal of a deposed leader, and bad input.
 */
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidCronExpression,
  InvalidSchedule,
  IntervalTooShort,
  ScheduleExists,
  ScheduleNotFound,
  SchedulerClosed,
  TaskQueueNotFound,
  checkFence,
  startTaskWorkers,
  type TaskRecord,
} from '../../../src/bus/index.js';
import { eventually, sleep } from '../../support/systems.js';
import { TASK_BACKENDS } from '../tasks/stores.js';
import { harness, type Harness } from './harness.js';

const MINUTE = 60_000;

/** Tasks the scheduler enqueued, oldest first. */
async function tasks(h: Harness): Promise<TaskRecord[]> {
  return h.queue.list('q', { limit: 1_000 });
}

for (const backend of TASK_BACKENDS) {
  describe(`scheduler on ${backend.name}`, () => {
    let h: Harness | undefined;
    beforeAll(() => backend.setup(), 30_000);
    afterAll(() => backend.teardown());
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    it('V7-4: a 60 s interval and an every-minute cron, the clock advanced tick by tick for five minutes: exactly five runs each', async () => {
      const metrics = new Registry();
      h = await harness(backend, { metrics });
      // Runs are handler runs, through a real worker pool on the same clock.
      const ran: string[] = [];
      const workers = await startTaskWorkers(h.system, h.queue, { queue: 'q', executor: { placement: 'loop', handlers: { tick: (payload) => void ran.push((payload as { kind: string }).kind) } }, concurrency: 2 });
      await h.lead();
      const start = h.clock.wallNow();
      const every = await h.scheduler.add({ id: 'every-minute', queue: 'q', task: { name: 'tick', payload: { kind: 'interval' } }, schedule: { kind: 'interval', everyMs: MINUTE } });
      expect(every.nextFireAt).toBe(start + MINUTE);
      await h.scheduler.add({ id: 'cron', queue: 'q', task: { name: 'tick', payload: { kind: 'cron' } }, schedule: { kind: 'cron', expression: '* * * * *' } });
      for (let tick = 0; tick < 300; tick++) await h.step();
      // An enqueue inside the scheduler's transaction wakes no pool on SQLite: it finds the last tasks on its next poll (1 s).
      for (let tick = 0; tick < 20 && ran.length < 10; tick++) await h.step(500);
      await eventually(() => ran.length >= 10, 10_000, 'ten handler runs');
      await sleep(200);
      await workers.stop(1_000);
      expect(ran.filter((kind) => kind === 'interval')).toHaveLength(5);
      expect(ran.filter((kind) => kind === 'cron')).toHaveLength(5);
      const runs = await tasks(h);
      expect(runs.every((task) => task.state === 'succeeded')).toBe(true);
      const interval = runs.filter((task) => (task.envelope.payload as { kind: string }).kind === 'interval');
      expect(interval.map((task) => task.envelope.idempotency_key)).toEqual([1, 2, 3, 4, 5].map((n) => `schedule:every-minute:${start + n * MINUTE}`));
      // The clock started at 00:00:00.000 and the election took a few 100 ms steps: minutes 1..5 fall inside.
      expect(runs.filter((task) => (task.envelope.payload as { kind: string }).kind === 'cron')).toHaveLength(5);
      const status = await h.scheduler.status();
      expect(status).toMatchObject({ role: 'leader', fires: 10, skipped: 0, refused: 0, failures: 0 });
      const entry = await h.scheduler.get('every-minute');
      expect(entry.lastFireAt).toBe(start + 5 * MINUTE);
      expect(entry.nextFireAt).toBe(start + 6 * MINUTE);
      const text = await metrics.metrics();
      expect(text).toContain(`molo_scheduler_fires_total{scheduler="${h.name}"} 10`);
      expect(text).toContain(`molo_scheduler_leader{scheduler="${h.name}"} 1`);
    }, 60_000);

    it('a one-shot runAt fires once and is removed; a past one fires at once', async () => {
      h = await harness(backend);
      await h.lead();
      await h.scheduler.add({ id: 'later', queue: 'q', task: { name: 'once' }, schedule: { kind: 'at', runAt: h.clock.wallNow() + 5_000 } });
      await h.scheduler.add({ id: 'past', queue: 'q', task: { name: 'once' }, schedule: { kind: 'at', runAt: h.clock.wallNow() - 3_600_000 } });
      await h.step();
      expect((await tasks(h)).map((task) => task.envelope.idempotency_key)).toEqual([expect.stringMatching(/^schedule:past:/)]);
      for (let tick = 0; tick < 10; tick++) await h.step();
      expect(await tasks(h)).toHaveLength(2);
      await expect(h.scheduler.get('later')).rejects.toBeInstanceOf(ScheduleNotFound);
      expect(await h.scheduler.list()).toEqual([]);
    }, 30_000);

    it('entries survive a restart; fires missed while down: skip drops them, run-once runs one', async () => {
      h = await harness(backend);
      await h.lead();
      const start = h.clock.wallNow();
      await h.scheduler.add({ id: 'skip', queue: 'q', task: { name: 'skip' }, schedule: { kind: 'interval', everyMs: MINUTE } });
      await h.scheduler.add({ id: 'once', queue: 'q', task: { name: 'once' }, schedule: { kind: 'interval', everyMs: MINUTE, missed: 'run-once' } });
      await h.scheduler.close();
      // Down for five minutes and a half: five fires of each come due with no scheduler running.
      h.clock.advance(5.5 * MINUTE);
      h.scheduler = await h.open();
      expect((await h.scheduler.list()).map((entry) => entry.id)).toEqual(['once', 'skip']);
      await h.lead();
      await h.step();
      const runs = await tasks(h);
      expect(runs.map((task) => task.envelope.idempotency_key)).toEqual([`schedule:once:${start + 5 * MINUTE}`]);
      expect(await h.scheduler.status()).toMatchObject({ fires: 1, skipped: 4 + 5 });
      expect((await h.scheduler.get('skip')).nextFireAt).toBe(start + 6 * MINUTE);
      // Back on the grid: the next minute fires both.
      for (let tick = 0; tick < 31; tick++) await h.step();
      expect(await tasks(h)).toHaveLength(3);
    }, 30_000);

    it('update and remove: a new schedule is due afresh; a removed entry fires no more', async () => {
      h = await harness(backend);
      await h.lead();
      await h.scheduler.add({ id: 'e', queue: 'q', task: { name: 'a' }, schedule: { kind: 'interval', everyMs: 10 * MINUTE } });
      const updated = await h.scheduler.update('e', { task: { name: 'b', payload: { v: 2 } }, schedule: { kind: 'at', runAt: h.clock.wallNow() + 2_000 } });
      expect(updated.task).toEqual({ name: 'b', payload: { v: 2 } });
      for (let tick = 0; tick < 3; tick++) await h.step();
      expect((await tasks(h)).map((task) => task.envelope.name)).toEqual(['b']);
      await h.scheduler.add({ id: 'gone', queue: 'q', task: { name: 'c' }, schedule: { kind: 'interval', everyMs: MINUTE } });
      await h.scheduler.remove('gone');
      for (let tick = 0; tick < 61; tick++) await h.step();
      expect(await tasks(h)).toHaveLength(1);
    }, 30_000);

    it('a deposed leader is fenced: once a newer token is seen, its fire is refused and rolled back', async () => {
      h = await harness(backend);
      await h.lead();
      const { token } = await h.scheduler.status();
      const runAt = h.clock.wallNow() + 1_000;
      await h.scheduler.add({ id: 'fenced', queue: 'q', task: { name: 'a' }, schedule: { kind: 'at', runAt } });
      // A newer leader elsewhere fenced the scheduler in; this one still believes it leads.
      await backend.db.transaction((tx) => checkFence(tx, `scheduler:${h!.name}`, token! + 1));
      const status = await h.step();
      expect(status).toMatchObject({ refused: 1, fires: 0, role: 'follower' });
      expect(await tasks(h)).toEqual([]);
      // Rolled back: the entry is still due, for the leader that holds the newer token.
      expect((await h.scheduler.get('fenced')).nextFireAt).toBe(runAt);
    }, 30_000);

    it('a cron entry in a time zone, and a nickname, are stored and read back with their zone', async () => {
      h = await harness(backend);
      const zoned = await h.scheduler.add({ id: 'paris', queue: 'q', task: { name: 'a' }, schedule: { kind: 'cron', expression: '0 9 * * *', timezone: 'Europe/Paris' } });
      expect(zoned.schedule).toEqual({ kind: 'cron', expression: '0 9 * * *', timezone: 'Europe/Paris', missed: 'skip' });
      // The harness clock starts at 2026-01-01T00:00Z: 09:00 in Paris is 08:00 UTC in winter.
      expect(new Date(zoned.nextFireAt!).toISOString()).toBe('2026-01-01T08:00:00.000Z');
      const daily = await h.scheduler.add({ id: 'daily', queue: 'q', task: { name: 'a' }, schedule: { kind: 'cron', expression: '@daily' } });
      expect(daily.schedule).toEqual({ kind: 'cron', expression: '@daily', missed: 'skip' });
      await h.scheduler.close();
      h.scheduler = await h.open();
      expect((await h.scheduler.get('paris')).schedule).toEqual(zoned.schedule);
      expect((await h.scheduler.get('daily')).nextFireAt).toBe(Date.UTC(2026, 0, 2));
    });

    it('bad input: cron, short interval, unknown id and queue, duplicate id, template fields a fire sets; a closed scheduler', async () => {
      h = await harness(backend);
      const base = { queue: 'q', task: { name: 'a' } };
      await expect(h.scheduler.add({ ...base, schedule: { kind: 'cron', expression: '61 * * * *' } })).rejects.toBeInstanceOf(InvalidCronExpression);
      await expect(h.scheduler.add({ ...base, schedule: { kind: 'cron', expression: '@fortnightly' } })).rejects.toBeInstanceOf(InvalidCronExpression);
      await expect(h.scheduler.add({ ...base, schedule: { kind: 'interval', everyMs: 59_999 } })).rejects.toBeInstanceOf(IntervalTooShort);
      await expect(h.scheduler.add({ ...base, schedule: { kind: 'at', runAt: 'not a date' } })).rejects.toBeInstanceOf(InvalidSchedule);
      await expect(h.scheduler.add({ ...base, task: { name: 'a', idempotencyKey: 'k' } as never, schedule: { kind: 'interval', everyMs: MINUTE } })).rejects.toMatchObject({ field: 'task.idempotencyKey' });
      await expect(h.scheduler.add({ ...base, queue: 'nope', schedule: { kind: 'interval', everyMs: MINUTE } })).rejects.toBeInstanceOf(TaskQueueNotFound);
      await expect(h.scheduler.get('missing')).rejects.toBeInstanceOf(ScheduleNotFound);
      await expect(h.scheduler.update('missing', { task: { name: 'b' } })).rejects.toBeInstanceOf(ScheduleNotFound);
      await expect(h.scheduler.remove('missing')).rejects.toBeInstanceOf(ScheduleNotFound);
      await h.scheduler.add({ ...base, id: 'dup', schedule: { kind: 'interval', everyMs: MINUTE } });
      await expect(h.scheduler.add({ ...base, id: 'dup', schedule: { kind: 'interval', everyMs: MINUTE } })).rejects.toBeInstanceOf(ScheduleExists);
      expect(await h.scheduler.list()).toHaveLength(1);
      await h.scheduler.close();
      await expect(h.scheduler.add({ ...base, schedule: { kind: 'interval', everyMs: MINUTE } })).rejects.toBeInstanceOf(SchedulerClosed);
      await expect(h.scheduler.list()).rejects.toBeInstanceOf(SchedulerClosed);
      await expect(h.scheduler.status()).rejects.toBeInstanceOf(SchedulerClosed);
      // Closed: nothing fires however long the clock runs.
      h.clock.advance(5 * MINUTE);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await tasks(h)).toEqual([]);
    }, 30_000);
  });
}
