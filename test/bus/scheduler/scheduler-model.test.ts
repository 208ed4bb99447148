/**
 * fast-check: random sequences of add, update, remove and clock ticks against a reference model of
 * which fires must happen. The leader ticks every simulated second and each step is one tick, so
 * every fire is on time: the model expects exactly one task per (entry, due time) while the entry
 * existed, and the scheduler must enqueue exactly those (read back by their idempotency keys).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextFireAfter, parseSchedule, type Schedule, type ScheduleInput } from '../../../src/bus/index.js';
import { TASK_BACKENDS } from '../tasks/stores.js';
import { harness } from './harness.js';

const sqlite = TASK_BACKENDS.find((backend) => backend.name === 'sqlite')!;

type Command =
  | { readonly kind: 'add'; readonly slot: number; readonly schedule: 'interval' | 'cron' | 'at'; readonly everyMin: number; readonly inSec: number }
  | { readonly kind: 'update'; readonly slot: number; readonly everyMin: number }
  | { readonly kind: 'remove'; readonly slot: number }
  | { readonly kind: 'ticks'; readonly n: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('add' as const), slot: fc.nat(3), schedule: fc.constantFrom('interval' as const, 'cron' as const, 'at' as const), everyMin: fc.integer({ min: 1, max: 2 }), inSec: fc.integer({ min: -5, max: 40 }) }) },
  fc.record({ kind: fc.constant('update' as const), slot: fc.nat(3), everyMin: fc.integer({ min: 1, max: 2 }) }),
  fc.record({ kind: fc.constant('remove' as const), slot: fc.nat(3) }),
  fc.record({ kind: fc.constant('ticks' as const), n: fc.integer({ min: 1, max: 90 }) }),
);

interface ModelEntry {
  readonly schedule: Schedule;
  next: number | null;
}

describe('scheduler against a reference model (SQLite)', () => {
  beforeAll(() => sqlite.setup(), 30_000);
  afterAll(() => sqlite.teardown());

  it('fires exactly the due times of the entries that existed, once each', async () => {
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 3, maxLength: 10 }), async (commands) => {
        const h = await harness(sqlite);
        try {
          await h.lead();
          const model = new Map<string, ModelEntry>();
          const expected: string[] = [];
          let version = 0;
          const now = (): number => h.clock.wallNow();
          // Always end with two minutes of ticks, so every entry still there comes due at least once.
          for (const cmd of [...commands, { kind: 'ticks', n: 120 } as const]) {
            const id = `e${cmd.kind === 'ticks' ? 0 : cmd.slot}`;
            if (cmd.kind === 'add') {
              if (model.has(id)) continue;
              const input: ScheduleInput =
                cmd.schedule === 'interval' ? { kind: 'interval', everyMs: cmd.everyMin * 60_000 } : cmd.schedule === 'cron' ? { kind: 'cron', expression: `*/${cmd.everyMin} * * * *` } : { kind: 'at', runAt: now() + cmd.inSec * 1_000 };
              const entry = await h.scheduler.add({ id, queue: 'q', task: { name: 'm', payload: { v: ++version } }, schedule: input });
              const schedule = parseSchedule({ ...entry.schedule } as ScheduleInput, now());
              model.set(id, { schedule, next: entry.nextFireAt });
            } else if (cmd.kind === 'update') {
              if (!model.has(id)) continue;
              const entry = await h.scheduler.update(id, { schedule: { kind: 'interval', everyMs: cmd.everyMin * 60_000 } });
              model.set(id, { schedule: parseSchedule({ ...entry.schedule } as ScheduleInput, now()), next: entry.nextFireAt });
            } else if (cmd.kind === 'remove') {
              if (!model.delete(id)) continue;
              await h.scheduler.remove(id);
            } else {
              for (let tick = 0; tick < cmd.n; tick++) {
                await h.step();
                // The model: every entry due by now fires at its due time, then moves to its next.
                for (const [key, entry] of model) {
                  if (entry.next === null || entry.next > now()) continue;
                  expected.push(`schedule:${key}:${entry.next}`);
                  entry.next = nextFireAfter(entry.schedule, now());
                  if (entry.schedule.kind === 'at') model.delete(key);
                }
              }
            }
          }
          const fired = (await h.queue.list('q', { limit: 1_000 })).map((task) => task.envelope.idempotency_key!);
          expect(fired.sort()).toEqual(expected.sort());
          checked += expected.length;
          expect((await h.scheduler.status()).refused).toBe(0);
        } finally {
          await h.close();
        }
      }),
      { numRuns: 10 },
    );
    // The runs fired something: the property was not vacuous.
    expect(checked).toBeGreaterThan(10);
  }, 90_000);
});
