import { describe, it } from 'vitest';
import { expectCleanRun } from '../support/example-output.js';
import { runScript } from '../support/run-script.js';

describe('examples/telemetry.ts', () => {
  it('logs crash and supervisor reports through one pino logger and counts the restart in the metrics', async () => {
    // The example's logger writes to its own stream: nothing may reach stderr.
    const result = await runScript('examples/telemetry.ts');
    expectCleanRun(result, [
      'hello, world',
      /call failed: .*greeter crashed on purpose/,
      'hello, again',
      'log: greeting world from Greeter',
      'report: actor.crashed level 50',
      'report: supervisor.child_terminated level 50 child greeter',
      'report: supervisor.child_restarted level 30 child greeter',
      'metric: molo_root_supervisor_up 1',
      'metric: molo_actor_exits_total{reason="error"} 1',
      'metric: molo_supervisor_restarts_total{supervisor="root",child="greeter"} 1',
    ]);
  });
});
