import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples/telemetry.ts', () => {
  it('logs crash and supervisor reports through one pino logger and counts the restart in the metrics', async () => {
    const result = await runScript('examples/telemetry.ts');
    expect(result.stderr).toBe(''); // the example's logger writes to its own stream, nothing to stderr
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain('hello, world');
    expect(out).toMatch(/call failed: .*greeter crashed on purpose/);
    expect(out).toContain('hello, again');
    expect(out).toContain('log: greeting world from Greeter');
    expect(out).toContain('report: actor.crashed level 50');
    expect(out).toContain('report: supervisor.child_terminated level 50 child greeter');
    expect(out).toContain('report: supervisor.child_restarted level 30 child greeter');
    expect(out).toContain('metric: molo_root_supervisor_up 1');
    expect(out).toContain('metric: molo_actor_exits_total{reason="error"} 1');
    expect(out).toContain('metric: molo_supervisor_restarts_total{supervisor="root",child="greeter"} 1');
  });
});
