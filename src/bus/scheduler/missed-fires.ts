/**
 * The missed-fire decision (S7-5), pure: given when an entry was next due and the time now, which
 * fire (if any) to run and when the entry is due next.
 *
 * Fires due in `[nextDue, now]` are counted (up to a cap, so a schedule idle for a year costs
 * nothing). The latest of them is on time if it is at most `misfireGraceMs` old (the scheduler
 * ticks every second, so an on-time fire is seen a tick or two late); the others were missed.
 * - `skip` (default): missed fires are dropped; an on-time one runs.
 * - `run-once`: however many were missed, exactly one run, for the latest due time.
 * An `at` entry (a delayed task) has one fire only, and runs late under either policy: dropping it
 * would lose the task.
 */
import { nextFireAfter, SCHEDULER_DEFAULTS, type Schedule } from './schedule.js';

/** Due fires counted at most, per decision. */
export const MAX_COUNTED_FIRES = 10_000;

export interface FireDecision {
  /** The scheduled time of the run to enqueue now, or null: nothing runs. */
  readonly fireAt: number | null;
  /** Due fires that will not run (dropped by `skip`, or folded into the one run of `run-once`); at most MAX_COUNTED_FIRES. */
  readonly missed: number;
  /** When the entry is due next (strictly after `now`), or null: never again. */
  readonly nextDue: number | null;
}

/**
 * What to do at `now` for an entry that was due at `nextDue` (null: nothing left). Both are wall
 * times in epoch ms, read from the injected clock by the caller.
 */
export function decideFires(schedule: Schedule, nextDue: number | null, now: number, misfireGraceMs: number = SCHEDULER_DEFAULTS.misfireGraceMs): FireDecision {
  if (nextDue === null || nextDue > now) return { fireAt: null, missed: 0, nextDue };
  const following = nextFireAfter(schedule, now);
  if (schedule.kind === 'at') return { fireAt: nextDue, missed: 0, nextDue: following };
  let due = 1;
  let latest = nextDue;
  if (schedule.kind === 'interval') {
    // Arithmetic, not a walk: fires are evenly spaced.
    const more = Math.floor((now - nextDue) / schedule.everyMs);
    due = Math.min(1 + more, MAX_COUNTED_FIRES);
    latest = nextDue + more * schedule.everyMs;
  } else {
    for (let at = nextFireAfter(schedule, nextDue); at !== null && at <= now && due < MAX_COUNTED_FIRES; at = nextFireAfter(schedule, at)) {
      due++;
      latest = at;
    }
    // Past the count cap, the latest due fire is still the last one at or before `now` (strictly before now + 1 ms).
    if (due === MAX_COUNTED_FIRES) latest = schedule.cron.previousRuns(1, new Date(now + 1))[0]?.getTime() ?? latest;
  }
  const onTime = now - latest <= misfireGraceMs;
  if (schedule.missed === 'run-once') return { fireAt: latest, missed: due - 1, nextDue: following };
  return { fireAt: onTime ? latest : null, missed: onTime ? due - 1 : due, nextDue: following };
}
