import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import {
  IntervalTooShort,
  InvalidCronExpression,
  InvalidSchedule,
  SCHEDULER_DEFAULTS,
  decideFires,
  firstDue,
  nextFireAfter,
  parseSchedule,
  type Schedule,
  type ScheduleInput,
} from '../../../src/bus/index.js';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const MINUTE = 60_000;

/**
 * Drives one entry as the scheduler will: a 1 s tick on the simulated clock, each tick asking
 * `decideFires` with the clock's wall time and recording what runs.
 */
function drive(schedule: Schedule, clock: SimulatedClock, advanceMs: number, pauses: readonly [number, number][] = []): { fires: number[]; missed: number } {
  const fires: number[] = [];
  let missed = 0;
  let due = firstDue(schedule, clock);
  const tick = (): void => {
    const now = clock.wallNow();
    const paused = pauses.some(([from, to]) => now >= from && now < to);
    if (!paused) {
      const decision = decideFires(schedule, due, now);
      if (decision.fireAt !== null) fires.push(decision.fireAt);
      missed += decision.missed;
      due = decision.nextDue;
    }
    timer = clock.setTimer(tick, SCHEDULER_DEFAULTS.tickMs);
  };
  let timer = clock.setTimer(tick, SCHEDULER_DEFAULTS.tickMs);
  clock.advance(advanceMs);
  clock.clearTimer(timer);
  return { fires, missed };
}

describe('schedules (S7-5)', () => {
  it('V7-4: a 60 s interval, the simulated clock advanced 5 ticks of 60 s: exactly 5 fires, on the minute', () => {
    const clock = new SimulatedClock(0, T0);
    const schedule = parseSchedule({ kind: 'interval', everyMs: 60_000 }, clock.wallNow());
    const fires: number[] = [];
    let due = firstDue(schedule, clock);
    // The scheduler ticks every second; the test moves the clock one interval at a time.
    const tick = (): void => {
      const decision = decideFires(schedule, due, clock.wallNow());
      if (decision.fireAt !== null) fires.push(decision.fireAt);
      due = decision.nextDue;
      timer = clock.setTimer(tick, 1_000);
    };
    let timer = clock.setTimer(tick, 1_000);
    for (let step = 0; step < 5; step++) clock.advance(60_000);
    clock.clearTimer(timer);
    expect(fires).toEqual([1, 2, 3, 4, 5].map((k) => T0 + k * MINUTE));
  });

  it('intervals under 60 s are refused with IntervalTooShort', () => {
    for (const everyMs of [59_999, 1_000, 0, -60_000, 60_000.5, Number.NaN]) {
      try {
        parseSchedule({ kind: 'interval', everyMs }, T0);
        expect.unreachable(String(everyMs));
      } catch (error) {
        expect(error).toBeInstanceOf(IntervalTooShort);
        expect((error as IntervalTooShort).code).toBe('SCHEDULE_INTERVAL_TOO_SHORT');
        expect((error as IntervalTooShort).minimumMs).toBe(60_000);
      }
    }
    expect(parseSchedule({ kind: 'interval', everyMs: 60_000 }, T0)).toMatchObject({ everyMs: 60_000, anchor: T0, missed: 'skip' });
  });

  it('cron: 5 UTC fields; next fire times computed from the given time only', () => {
    const schedule = parseSchedule({ kind: 'cron', expression: '*/15 9-17 * * 1-5' }, T0);
    // 2026-01-01 is a Thursday.
    expect(new Date(nextFireAfter(schedule, T0)!).toISOString()).toBe('2026-01-01T09:00:00.000Z');
    expect(new Date(nextFireAfter(schedule, Date.UTC(2026, 0, 1, 9, 0, 0))!).toISOString()).toBe('2026-01-01T09:15:00.000Z');
    expect(new Date(nextFireAfter(schedule, Date.UTC(2026, 0, 2, 17, 45, 0))!).toISOString()).toBe('2026-01-05T09:00:00.000Z');
    const daily = parseSchedule({ kind: 'cron', expression: '30 2 * * *', missed: 'run-once' }, T0);
    expect(new Date(nextFireAfter(daily, T0)!).toISOString()).toBe('2026-01-01T02:30:00.000Z');
    expect(daily.missed).toBe('run-once');
    // Extra whitespace is fine.
    expect(parseSchedule({ kind: 'cron', expression: '  0  0 * * *  ' }, T0).kind).toBe('cron');
  });

  it('cron nicknames stand for their 5 fields', () => {
    const at = (expression: string, after = T0): string => new Date(nextFireAfter(parseSchedule({ kind: 'cron', expression }, T0), after)!).toISOString();
    // T0 is 2026-01-01T00:00:00Z, a Thursday.
    expect(at('@hourly')).toBe('2026-01-01T01:00:00.000Z');
    expect(at('@daily')).toBe('2026-01-02T00:00:00.000Z');
    expect(at('@midnight')).toBe('2026-01-02T00:00:00.000Z');
    expect(at('@weekly')).toBe('2026-01-04T00:00:00.000Z');
    expect(at('@monthly')).toBe('2026-02-01T00:00:00.000Z');
    expect(at('@yearly')).toBe('2027-01-01T00:00:00.000Z');
    expect(at('@ANNUALLY')).toBe('2027-01-01T00:00:00.000Z');
  });

  it('cron in a time zone: fields read in local time, across a daylight-saving change', () => {
    const paris = parseSchedule({ kind: 'cron', expression: '0 9 * * *', timezone: 'Europe/Paris' }, T0);
    // Winter: 09:00 in Paris is 08:00 UTC; summer (after 2026-03-29): 07:00 UTC.
    expect(new Date(nextFireAfter(paris, T0)!).toISOString()).toBe('2026-01-01T08:00:00.000Z');
    expect(new Date(nextFireAfter(paris, Date.UTC(2026, 5, 1))!).toISOString()).toBe('2026-06-01T07:00:00.000Z');
    // Daylight saving (as docs/scheduler.md says): the skipped 02:30 fires at 03:00 CEST; the repeated 02:30 fires once.
    const early = parseSchedule({ kind: 'cron', expression: '30 2 * * *', timezone: 'Europe/Paris' }, T0);
    expect(new Date(nextFireAfter(early, Date.UTC(2026, 2, 28, 12))!).toISOString()).toBe('2026-03-29T01:00:00.000Z');
    const autumn = nextFireAfter(early, Date.UTC(2026, 9, 24, 12))!;
    expect(new Date(autumn).toISOString()).toBe('2026-10-25T00:30:00.000Z');
    expect(new Date(nextFireAfter(early, autumn)!).toISOString()).toBe('2026-10-26T01:30:00.000Z');
    const nyDaily = parseSchedule({ kind: 'cron', expression: '@daily', timezone: 'America/New_York' }, T0);
    expect(new Date(nextFireAfter(nyDaily, T0)!).toISOString()).toBe('2026-01-01T05:00:00.000Z');
    for (const timezone of ['Mars/Olympus', '', 'x'.repeat(80), 42]) {
      expect(() => parseSchedule({ kind: 'cron', expression: '@daily', timezone: timezone as string }, T0), String(timezone)).toThrow(InvalidSchedule);
    }
  });

  it('invalid cron expressions are refused with InvalidCronExpression', () => {
    for (const expression of ['', '* * * *', '* * * * * *', '@fortnightly', '@', '61 * * * *', '* 24 * * *', '* * * * 8', 'a b c d e', '0 0 31 2 *', 'x'.repeat(300), 42]) {
      try {
        parseSchedule({ kind: 'cron', expression: expression as string }, T0);
        expect.unreachable(String(expression));
      } catch (error) {
        expect(error, String(expression)).toBeInstanceOf(InvalidCronExpression);
        expect((error as InvalidCronExpression).code).toBe('SCHEDULE_INVALID_CRON');
      }
    }
  });

  it('other bad schedules are refused with InvalidSchedule naming the field', () => {
    const cases: [unknown, string][] = [
      [{ kind: 'at', runAt: 'soon' }, 'runAt'],
      [{ kind: 'interval', everyMs: 60_000, anchor: 'x' }, 'anchor'],
      [{ kind: 'interval', everyMs: 400 * 24 * 3_600_000 }, 'everyMs'],
      [{ kind: 'weekly' }, 'kind'],
      [{ kind: 'at', runAt: T0, missed: 'catch-up' }, 'missed'],
      [null, 'schedule'],
    ];
    for (const [input, field] of cases) {
      try {
        parseSchedule(input as ScheduleInput, T0);
        expect.unreachable(field);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidSchedule);
        expect((error as InvalidSchedule).code).toBe('SCHEDULE_INVALID');
        expect((error as InvalidSchedule).field).toBe(field);
      }
    }
  });

  it('runAt fires once, at its time, and once even when first seen late (a delayed task is never dropped)', () => {
    const clock = new SimulatedClock(0, T0);
    const at = parseSchedule({ kind: 'at', runAt: T0 + 90_500 }, clock.wallNow());
    expect(drive(at, clock, 10 * MINUTE).fires).toEqual([T0 + 90_500]);
    const late = parseSchedule({ kind: 'at', runAt: T0 - 3_600_000 }, T0);
    expect(decideFires(late, firstDue(late, clock), clock.wallNow())).toEqual({ fireAt: T0 - 3_600_000, missed: 0, nextDue: null });
  });
});

describe('missed-fire policy', () => {
  it('skip (default) drops fires missed during a pause; run-once runs exactly one for them', () => {
    const pause: [number, number][] = [[T0 + 2.5 * MINUTE, T0 + 6.5 * MINUTE]];
    const skip = drive(parseSchedule({ kind: 'interval', everyMs: MINUTE }, T0), new SimulatedClock(0, T0), 10 * MINUTE, pause);
    // Fires at 3, 4, 5 and 6 fell in the pause: dropped.
    expect(skip.fires).toEqual([1, 2, 7, 8, 9, 10].map((k) => T0 + k * MINUTE));
    expect(skip.missed).toBe(4);
    const once = drive(parseSchedule({ kind: 'interval', everyMs: MINUTE, missed: 'run-once' }, T0), new SimulatedClock(0, T0), 10 * MINUTE, pause);
    // One run when the pause ends, for the latest missed time (6), then on schedule again.
    expect(once.fires).toEqual([1, 2, 6, 7, 8, 9, 10].map((k) => T0 + k * MINUTE));
    expect(once.missed).toBe(3);
  });

  it('a fire seen within the grace is on time; later than it, missed', () => {
    const schedule = parseSchedule({ kind: 'interval', everyMs: MINUTE }, T0);
    expect(decideFires(schedule, T0 + MINUTE, T0 + MINUTE + 5_000)).toEqual({ fireAt: T0 + MINUTE, missed: 0, nextDue: T0 + 2 * MINUTE });
    expect(decideFires(schedule, T0 + MINUTE, T0 + MINUTE + 5_001)).toEqual({ fireAt: null, missed: 1, nextDue: T0 + 2 * MINUTE });
    expect(decideFires(schedule, T0 + MINUTE, T0 + MINUTE - 1)).toEqual({ fireAt: null, missed: 0, nextDue: T0 + MINUTE });
  });

  it('a year-long gap costs a bounded count, for cron too', () => {
    const cron = parseSchedule({ kind: 'cron', expression: '* * * * *', missed: 'run-once' }, T0);
    const later = T0 + 365 * 24 * 3_600_000 + 30_000;
    const decision = decideFires(cron, T0 + MINUTE, later);
    expect(decision.fireAt).toBe(T0 + 365 * 24 * 3_600_000);
    expect(decision.missed).toBe(9_999);
    expect(decision.nextDue).toBe(T0 + 365 * 24 * 3_600_000 + MINUTE);
  });

  it('property: every-second ticks fire each interval exactly once, never early, never twice', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 40 }), fc.constantFrom<'skip' | 'run-once'>('skip', 'run-once'), (minutes, ticks, missed) => {
        const clock = new SimulatedClock(0, T0);
        const everyMs = minutes * MINUTE;
        const schedule = parseSchedule({ kind: 'interval', everyMs, missed }, clock.wallNow());
        const { fires } = drive(schedule, clock, ticks * everyMs);
        expect(fires).toEqual(Array.from({ length: ticks }, (_, k) => T0 + (k + 1) * everyMs));
      }),
      { seed: 11, numRuns: 100 },
    );
  });

  it('property: with random pauses, skip never runs a fire twice or late, run-once runs one per gap', () => {
    const pauses = fc.array(fc.tuple(fc.integer({ min: 0, max: 30 * 60 }), fc.integer({ min: 1, max: 10 * 60 })), { maxLength: 4 });
    fc.assert(
      fc.property(pauses, fc.constantFrom('skip', 'run-once', '*/2 * * * *'), (rawPauses, mode) => {
        const clock = new SimulatedClock(0, T0);
        const input: ScheduleInput = mode === '*/2 * * * *' ? { kind: 'cron', expression: mode } : { kind: 'interval', everyMs: MINUTE, missed: mode };
        const schedule = parseSchedule(input, clock.wallNow());
        const windows = rawPauses.map(([start, length]) => [T0 + start * 1_000, T0 + (start + length) * 1_000] as [number, number]);
        const { fires } = drive(schedule, clock, 40 * MINUTE, windows);
        expect(new Set(fires).size).toBe(fires.length);
        expect([...fires].sort((a, b) => a - b)).toEqual(fires);
        // Every fire is a real schedule time.
        for (const at of fires) expect(nextFireAfter(schedule, at - 1)).toBe(at);
        const every = schedule.kind === 'cron' ? 2 * MINUTE : MINUTE;
        const all = Array.from({ length: 40 * MINUTE / every }, (_, k) => T0 + (k + 1) * every);
        // A fire the scheduler saw on time always runs.
        const seenOnTime = all.filter((at) => !windows.some(([from, to]) => at >= from && at < to && to - at > SCHEDULER_DEFAULTS.misfireGraceMs - 1_000));
        for (const at of seenOnTime) expect(fires).toContain(at);
        if (schedule.missed === 'skip') {
          // Nothing runs that was not seen within the grace.
          expect(fires.every((at) => all.includes(at))).toBe(true);
          expect(fires.length).toBeLessThanOrEqual(all.length);
        } else {
          expect(fires.length).toBeGreaterThanOrEqual(seenOnTime.length);
        }
      }),
      { seed: 5, numRuns: 60 },
    );
  });
});
