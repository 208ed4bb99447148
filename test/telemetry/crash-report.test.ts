import { describe, expect, it } from 'vitest';
import { CalleeExited, type Ref } from '../../src/actors/index.js';
import { GenServer, Supervisor, worker } from '../../src/behaviours/index.js';
import { createTelemetry } from '../../src/telemetry/index.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { eventually, testSystem } from '../support/systems.js';
import { logCapture, type LogRecord } from './helpers.js';

class Fragile extends GenServer<'crash' | 'ping', string> {
  override handleCall(request: 'crash' | 'ping'): string {
    if (request === 'crash') throw new Error('boom');
    return 'pong';
  }
}

async function childRef(system: ReturnType<typeof testSystem>, supervisor: Ref | string, id: string): Promise<Ref> {
  const entry = (await Supervisor.whichChildren(system, supervisor)).find((child) => child.id === id);
  if (entry === undefined || typeof entry.ref !== 'object') throw new Error(`child ${id} is not running`);
  return entry.ref;
}

const byEvent = (records: LogRecord[], event: string): LogRecord[] => records.filter((record) => record.event === event);

describe('crash reports', () => {
  it('logs a crashing child and its restart as JSON with the fixed fields', async () => {
    const capture = logCapture();
    const telemetry = createTelemetry({ logger: { destination: capture.stream, level: 'info' } });
    const system = testSystem({ ...telemetry.systemOptions });
    const supervisor = await Supervisor.start(system, { children: [worker('fragile', () => new Fragile())] }, { name: 'top' });
    const first = await childRef(system, supervisor, 'fragile');

    await expect(GenServer.call(system, first, 'crash')).rejects.toBeInstanceOf(CalleeExited);
    await eventually(() => byEvent(capture.records(), 'supervisor.child_restarted').length === 1, 5_000, 'the restart report');
    const second = await childRef(system, supervisor, 'fragile');
    expect(second.equals(first)).toBe(false);
    expect(await GenServer.call(system, second, 'ping')).toBe('pong');

    const records = capture.records();
    const [terminated] = byEvent(records, 'supervisor.child_terminated');
    expect(terminated).toMatchObject({
      level: 50,
      event: 'supervisor.child_terminated',
      supervisor: supervisor.toString(),
      supervisorName: 'top',
      childId: 'fragile',
      reason: 'Error: boom',
      restartCount: 0,
      msg: 'supervisor.child_terminated',
    });
    const [restarted] = byEvent(records, 'supervisor.child_restarted');
    expect(restarted).toMatchObject({
      level: 30,
      event: 'supervisor.child_restarted',
      supervisor: supervisor.toString(),
      supervisorName: 'top',
      childId: 'fragile',
      restartCount: 1,
    });
    expect(restarted).not.toHaveProperty('reason');
    // The child's own crash report: which actor, what it ran, why, and where.
    const [crashed] = byEvent(records, 'actor.crashed');
    expect(crashed).toMatchObject({ level: 50, actor: first.toString(), behaviour: 'Fragile', reason: 'Error: boom' });
    expect(crashed!.stack).toContain('boom');
    // The report comes before the restart, one line each.
    expect(records.indexOf(terminated!)).toBeLessThan(records.indexOf(restarted!));
    expect(byEvent(records, 'supervisor.child_terminated')).toHaveLength(1);

    expect(await Supervisor.stop(system, supervisor)).toBe('shutdown');
  });

  it('logs the supervisor giving up when a child crashes past the intensity', async () => {
    const capture = logCapture();
    const telemetry = createTelemetry({ logger: { destination: capture.stream } });
    const system = testSystem({ ...telemetry.systemOptions });
    const supervisor = await Supervisor.start(system, { intensity: 0, children: [worker('fragile', () => new Fragile())] });
    const exited = system.exited(supervisor);
    await expect(GenServer.call(system, await childRef(system, supervisor, 'fragile'), 'crash')).rejects.toBeInstanceOf(CalleeExited);
    expect(await exited).toBe('shutdown');

    await eventually(() => byEvent(capture.records(), 'supervisor.shutdown').length === 1, 5_000, 'the shutdown report');
    expect(byEvent(capture.records(), 'supervisor.shutdown')[0]).toMatchObject({
      level: 50,
      supervisor: supervisor.toString(),
      childId: 'fragile',
      reason: 'Error: boom',
      restartCount: 0,
      cause: 'reached_max_restart_intensity',
    });
    expect(byEvent(capture.records(), 'supervisor.child_restarted')).toEqual([]);
  });

  it('logs a failed restart as a start error', async () => {
    const capture = logCapture();
    const telemetry = createTelemetry({ logger: { destination: capture.stream } });
    const system = testSystem({ ...telemetry.systemOptions });
    let starts = 0;
    class FailsOnRestart extends Fragile {
      override init(): void {
        if (++starts > 1) throw new Error('cannot start again');
      }
    }
    const supervisor = await Supervisor.start(system, { intensity: 1, children: [worker('flaky', () => new FailsOnRestart())] });
    const exited = system.exited(supervisor);
    await expect(GenServer.call(system, await childRef(system, supervisor, 'flaky'), 'crash')).rejects.toBeInstanceOf(CalleeExited);
    expect(await exited).toBe('shutdown');

    await eventually(() => byEvent(capture.records(), 'supervisor.shutdown').length === 1, 5_000, 'the shutdown report');
    const [startError] = byEvent(capture.records(), 'supervisor.start_error');
    expect(startError).toMatchObject({ level: 50, childId: 'flaky', reason: 'Error: cannot start again', restartCount: 0 });
  });

  it('logs nothing below the level, and debug lifecycle lines when asked', async () => {
    const quiet = logCapture();
    const quietSystem = testSystem({ ...createTelemetry({ logger: { destination: quiet.stream, level: 'warn' } }).systemOptions });
    const loud = logCapture();
    const loudSystem = testSystem({ ...createTelemetry({ logger: { destination: loud.stream, level: 'debug' } }).systemOptions });
    for (const system of [quietSystem, loudSystem]) {
      const ref = system.spawn(() => {}, { name: 'brief' });
      system.exit(ref, 'shutdown');
    }
    await eventually(() => loud.records().length >= 2, 5_000, 'debug lines');
    expect(loud.records().map((record) => [record.event, record.name])).toEqual([
      ['actor.spawned', 'brief'],
      ['actor.exited', 'brief'],
    ]);
    expect(loud.records()[1]).toMatchObject({ level: 20, reason: 'shutdown', behaviour: 'actor' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(quiet.records()).toEqual([]);
  });
  it('reads nothing of a crash reason when no report would be written (its stack costs a restart more than the restart)', async () => {
    /** An error that counts reads of the fields a report formats. */
    const countedError = (): { error: Error; reads: () => number } => {
      const error = new Error('counted');
      const stack = error.stack;
      let reads = 0;
      Object.defineProperty(error, 'stack', { get: () => (reads++, stack) });
      Object.defineProperty(error, 'message', { get: () => (reads++, 'counted') });
      return { error, reads: () => reads };
    };
    const restartOnce = async (level: 'fatal' | 'error'): Promise<{ reads: number; lines: LogRecord[] }> => {
      const capture = logCapture();
      const system = testSystem({ logger: createLogger({ destination: capture.stream, level }) });
      const supervisor = await Supervisor.start(system, { children: [worker('fragile', () => new Fragile())] });
      const first = await childRef(system, supervisor, 'fragile');
      const { error, reads } = countedError();
      system.exit(first, error);
      await eventually(() => system.isAlive(first) === false, 5_000, 'the exit');
      const second = await childRef(system, supervisor, 'fragile');
      expect(second.equals(first)).toBe(false);
      const counted = reads();
      expect(await Supervisor.stop(system, supervisor)).toBe('shutdown');
      await new Promise((resolve) => setImmediate(resolve));
      return { reads: counted, lines: capture.records() };
    };
    const off = await restartOnce('fatal');
    expect(off).toEqual({ reads: 0, lines: [] });
    // The same restart with the level on reads the reason and writes both reports.
    const on = await restartOnce('error');
    expect(on.reads).toBeGreaterThan(0);
    expect(on.lines.map((line) => line.event).sort()).toEqual(['actor.crashed', 'supervisor.child_terminated']);
  });
});
