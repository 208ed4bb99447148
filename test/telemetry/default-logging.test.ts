import { describe, expect, it } from 'vitest';
import { ActorSystem } from '../../src/actors/index.js';
import { GenServer, Supervisor, worker } from '../../src/behaviours/index.js';
import { envLogLevel } from '../../src/telemetry/index.js';
import { runScript } from '../support/run-script.js';
import { testSystem } from '../support/systems.js';
import { logCapture, type LogRecord } from './helpers.js';

const FIXTURE = 'test/telemetry/fixtures/plain-system-crash.ts';

function jsonLines(text: string): LogRecord[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogRecord);
}

describe('a plain ActorSystem reports crashes without telemetry (as OTP prints crash reports)', () => {
  it('logs the supervisor report and the crash report as pino JSON on stderr by default', async () => {
    const run = await runScript(FIXTURE, { env: { MOLO_LOG_LEVEL: '' } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('done\n');
    const records = jsonLines(run.stderr);
    const events = records.map((record) => record.event);
    expect(events).toContain('supervisor.child_terminated');
    expect(events).toContain('supervisor.child_restarted');
    expect(events).toContain('actor.crashed');
    const terminated = records.find((record) => record.event === 'supervisor.child_terminated')!;
    // pino's own fields (numeric level, time, pid, hostname) and the report's fixed fields.
    expect(terminated).toMatchObject({ level: 50, event: 'supervisor.child_terminated', childId: 'fragile', reason: 'Error: boom', supervisorName: 'top' });
    expect(terminated).toHaveProperty('time');
    expect(terminated).toHaveProperty('pid');
    expect(records.find((record) => record.event === 'actor.crashed')).toMatchObject({ level: 50, behaviour: 'Fragile', reason: 'Error: boom' });
  });

  it('MOLO_LOG_LEVEL sets the level: error keeps the error reports and drops the info one', async () => {
    const run = await runScript(FIXTURE, { env: { MOLO_LOG_LEVEL: 'error' } });
    expect(run.code, run.stderr).toBe(0);
    const records = jsonLines(run.stderr);
    expect(records.map((record) => record.event)).toContain('supervisor.child_terminated');
    expect(records.every((record) => record.level >= 50)).toBe(true);
    const silent = await runScript(FIXTURE, { env: { MOLO_LOG_LEVEL: 'silent' } });
    expect(jsonLines(silent.stderr)).toEqual([]);
  });

  it('logger options set the level and destination in process; an unknown MOLO_LOG_LEVEL is refused by name', async () => {
    const capture = logCapture();
    const system = testSystem({ logger: { destination: capture.stream, level: 'warn' } });
    class Fragile extends GenServer<'crash', string> {
      override handleCall(): string {
        throw new Error('boom');
      }
    }
    const supervisor = await Supervisor.start(system, { children: [worker('fragile', () => new Fragile())] });
    const [child] = await Supervisor.whichChildren(system, supervisor);
    await GenServer.call(system, child!.ref as never, 'crash').catch(() => {});
    await system.settle();
    await Supervisor.stop(system, supervisor);
    await new Promise((resolve) => setImmediate(resolve));
    const events = capture.records().map((record) => record.event);
    expect(events).toContain('supervisor.child_terminated');
    expect(events).not.toContain('supervisor.child_restarted'); // info, below warn
    expect(() => envLogLevel({ MOLO_LOG_LEVEL: 'loud' })).toThrow(/MOLO_LOG_LEVEL must be one of .*got 'loud'/);
    expect(envLogLevel({ MOLO_LOG_LEVEL: 'DEBUG' })).toBe('debug');
    expect(new ActorSystem({ logger: false }).logger.isLevelEnabled('error')).toBe(false);
  });
});
