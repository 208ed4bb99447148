import { describe, it } from 'vitest';
import { expectCleanRun } from '../support/example-output.js';
import { runScript } from '../support/run-script.js';

describe('examples/scheduler.ts', () => {
  it('adds a delayed task, an interval and a cron entry; the reminder fires once; entries survive a restart', async () => {
    const result = await runScript('examples/scheduler.ts', { env: { MOLO_LOG_LEVEL: 'warn' }, timeoutMs: 60_000 });
    expectCleanRun(result, [
      'reminder: at, next fire in 0 min',
      'hourly-digest: interval, next fire in 60 min',
      /weekday-report: cron, next fire in \d+ min/,
      'refused: SCHEDULE_INTERVAL_TOO_SHORT',
      'ran remind {"to":"ops"}',
      'fired: remind, succeeded (key schedule:reminder:<time>)',
      'scheduler: leader, fires 1, refused 0',
      'after restart: hourly-digest, weekday-report',
      'actors left: 0',
    ]);
  }, 90_000);
});
