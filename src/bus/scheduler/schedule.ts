/**
 * What a schedule entry says about time (S7-5): `at` (a delayed task, one fire), `interval` (every
 * N ms, at least 60 s, anchored so fires never drift) or `cron` (5 fields or a nickname, UTC or an
 * IANA time zone, parsed by croner).
 * Validated once by {@link parseSchedule}; {@link nextFireAfter} is pure: it reads no clock but the
 * time it is given, so the scheduler feeds it its injected clock's wall time and a SimulatedClock
 * drives it in tests.
 */
import { Cron } from 'croner';
import type { Clock } from '../../actors/index.js';
import { InvalidCronExpression, IntervalTooShort, InvalidSchedule } from './errors.js';

/** What to do with fires that came due while no scheduler ran them (down, no leader, behind). */
export type MissedFirePolicy = 'skip' | 'run-once';

export type ScheduleInput =
  | { readonly kind: 'at'; readonly runAt: Date | number | string; readonly missed?: MissedFirePolicy }
  | {
      readonly kind: 'interval';
      readonly everyMs: number;
      /** Fires fall on `anchor + k · everyMs` (a Date, epoch ms or ISO 8601); default: when the schedule is parsed. */
      readonly anchor?: Date | number | string;
      readonly missed?: MissedFirePolicy;
    }
  | {
      readonly kind: 'cron';
      /** 5 fields (minute hour day-of-month month day-of-week) or a nickname: `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`. */
      readonly expression: string;
      /** An IANA time zone the fields are read in (`Europe/Paris`); default `UTC`. Daylight-saving gaps and overlaps follow croner. */
      readonly timezone?: string;
      readonly missed?: MissedFirePolicy;
    };

/** A validated schedule; times are epoch milliseconds (wall clock, UTC). */
export type Schedule =
  | { readonly kind: 'at'; readonly runAt: number; readonly missed: MissedFirePolicy }
  | { readonly kind: 'interval'; readonly everyMs: number; readonly anchor: number; readonly missed: MissedFirePolicy }
  | { readonly kind: 'cron'; readonly expression: string; readonly timezone: string; readonly cron: Cron; readonly missed: MissedFirePolicy };

export const SCHEDULER_DEFAULTS = Object.freeze({
  /** How often the scheduler looks for due entries (S7-5). */
  tickMs: 1_000,
  /** The shortest interval (S7-5). */
  minIntervalMs: 60_000,
  /** The longest interval: one year. */
  maxIntervalMs: 366 * 24 * 60 * 60 * 1_000,
  /** A fire seen this late is still on time (a tick or two behind); later than this it was missed. */
  misfireGraceMs: 5_000,
  missed: 'skip' as MissedFirePolicy,
});

const MAX_CRON_LENGTH = 256;

/** Validates a schedule; `nowMs` (the injected clock's wall time) anchors an interval given no anchor. */
export function parseSchedule(input: ScheduleInput, nowMs: number): Schedule {
  if (typeof input !== 'object' || input === null) throw new InvalidSchedule('schedule', 'must be an object');
  const missed = input.missed ?? SCHEDULER_DEFAULTS.missed;
  if (missed !== 'skip' && missed !== 'run-once') throw new InvalidSchedule('missed', `must be 'skip' or 'run-once', got ${String(missed)}`);
  switch (input.kind) {
    case 'at':
      return Object.freeze({ kind: 'at', runAt: timeOf('runAt', input.runAt), missed });
    case 'interval': {
      const everyMs = input.everyMs;
      if (typeof everyMs !== 'number' || !Number.isInteger(everyMs) || everyMs < SCHEDULER_DEFAULTS.minIntervalMs) {
        throw new IntervalTooShort(Number(everyMs), SCHEDULER_DEFAULTS.minIntervalMs);
      }
      if (everyMs > SCHEDULER_DEFAULTS.maxIntervalMs) throw new InvalidSchedule('everyMs', `must be at most ${SCHEDULER_DEFAULTS.maxIntervalMs} ms (one year)`);
      const anchor = input.anchor === undefined ? Math.floor(nowMs) : timeOf('anchor', input.anchor);
      return Object.freeze({ kind: 'interval', everyMs, anchor, missed });
    }
    case 'cron':
    {
      const timezone = checkTimezone(input.timezone ?? 'UTC');
      return Object.freeze({ kind: 'cron', expression: input.expression, timezone, cron: parseCron(input.expression, timezone), missed });
    }
    default:
      throw new InvalidSchedule('kind', `must be 'at', 'interval' or 'cron', got ${String((input as { kind?: unknown }).kind)}`);
  }
}

/** The first fire strictly after `afterMs`, or null when there is none (an `at` already past). */
export function nextFireAfter(schedule: Schedule, afterMs: number): number | null {
  switch (schedule.kind) {
    case 'at':
      return schedule.runAt > afterMs ? schedule.runAt : null;
    case 'interval': {
      if (afterMs < schedule.anchor) return schedule.anchor;
      // The next multiple of everyMs past the anchor, strictly after afterMs.
      return schedule.anchor + (Math.floor((afterMs - schedule.anchor) / schedule.everyMs) + 1) * schedule.everyMs;
    }
    case 'cron': {
      const next = schedule.cron.nextRun(new Date(afterMs));
      return next === null ? null : next.getTime();
    }
    default:
      return unreachable(schedule);
  }
}

/**
 * When a new (or reloaded) entry is first due, read from the injected clock: the next fire after
 * now, except that an `at` already past is due at once (a delayed task is never dropped).
 */
export function firstDue(schedule: Schedule, clock: Pick<Clock, 'wallNow'>): number | null {
  const now = Math.floor(clock.wallNow());
  return schedule.kind === 'at' ? schedule.runAt : nextFireAfter(schedule, now);
}

/** The usual nicknames, as the 5 fields they stand for (Vixie cron's table). */
const CRON_NICKNAMES: Readonly<Record<string, string>> = Object.freeze({
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
});

/** An IANA zone name the platform knows (`Intl` refuses the rest), at most 64 characters. */
function checkTimezone(timezone: unknown): string {
  if (typeof timezone !== 'string' || timezone.length === 0 || timezone.length > 64) throw new InvalidSchedule('timezone', 'must be an IANA time zone name such as Europe/Paris');
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new InvalidSchedule('timezone', `unknown time zone ${JSON.stringify(timezone)}`);
  }
  return timezone;
}

/**
 * Checks and compiles a 5-field cron expression (minute hour day-of-month month day-of-week) or a
 * nickname (`@daily`), read in `timezone` (default UTC); seconds and years are refused, and so is
 * an expression that never fires.
 */
export function parseCron(expression: unknown, timezone = 'UTC'): Cron {
  if (typeof expression !== 'string' || expression.length > MAX_CRON_LENGTH) {
    throw new InvalidCronExpression(expression, `must be a string of at most ${MAX_CRON_LENGTH} characters`);
  }
  const trimmed = expression.trim();
  const nickname = trimmed.startsWith('@') ? CRON_NICKNAMES[trimmed.toLowerCase()] : undefined;
  if (trimmed.startsWith('@') && nickname === undefined) throw new InvalidCronExpression(expression, `unknown nickname; one of ${Object.keys(CRON_NICKNAMES).join(', ')}`);
  const fields = (nickname ?? trimmed).split(/\s+/);
  if (fields.length !== 5 || fields[0] === '') throw new InvalidCronExpression(expression, `must have 5 fields (minute hour day-of-month month day-of-week), has ${fields[0] === '' ? 0 : fields.length}`);
  let cron: Cron;
  try {
    // No function: croner only computes times, it arms no timer of its own.
    cron = new Cron(fields.join(' '), { mode: '5-part', timezone: timezone === 'UTC' ? 'Etc/UTC' : timezone });
  } catch (error) {
    throw new InvalidCronExpression(expression, (error as Error).message.replace(/^CronPattern: /, ''), { cause: error });
  }
  if (cron.nextRun(new Date(0)) === null) throw new InvalidCronExpression(expression, 'never fires');
  return cron;
}

function timeOf(field: string, value: unknown): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) throw new InvalidSchedule(field, 'must be a valid date (a Date, epoch milliseconds or ISO 8601)');
  return Math.floor(ms);
}

function unreachable(value: never): never {
  throw new Error(`unknown schedule ${JSON.stringify(value)}`);
}
