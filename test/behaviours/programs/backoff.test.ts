import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/index.js';
import { ProgramSupervisor } from '../../../src/behaviours/programs/index.js';
import { testSystem } from '../../support/systems.js';
import { captureLogger, eventsOf, expectNoProgramProcesses, nodeProgram, waitForProgram } from './helpers.js';

afterEach(expectNoProgramProcesses);

describe('backoff between restarts', () => {
  it('doubles the delay from initialMs (real time, within tolerance)', async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [{ name: 'crash', command: '/bin/sh', args: ['-c', 'exit 1'], maxRestarts: 4, backoff: { initialMs: 50, maxMs: 10_000 } }],
    });
    try {
      await waitForProgram(system, sup, 'crash', (s) => s.state === 'fatal', 'fatal');
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
    const exits = eventsOf(entries, 'crash', 'exited');
    const spawns = eventsOf(entries, 'crash', 'spawned');
    expect(eventsOf(entries, 'crash', 'backoff').map((entry) => entry.fields.delayMs)).toEqual([50, 100, 200, 400]);
    expect(spawns).toHaveLength(5);
    // Measured from each exit to the next spawn: never less than 50 ms * 2^n, and at most a
    // scheduling tolerance more (a ratio of two noisy small delays would be flakier than this).
    const delays = exits.slice(0, 4).map((exit, i) => spawns[i + 1]!.at - exit.at);
    [50, 100, 200, 400].forEach((expected, i) => {
      expect(delays[i]).toBeGreaterThanOrEqual(expected - 1);
      expect(delays[i]).toBeLessThan(expected + 150);
    });
    expect(delays[3]! - delays[0]!).toBeGreaterThan(350 - 150);
  });

  it('uses the injected clock: 1 s doubling to the 60 s cap by default, exactly', async () => {
    const clock = new SimulatedClock();
    const system = testSystem({ clock });
    const { logger, entries } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [{ name: 'crash', command: '/bin/sh', args: ['-c', 'exit 1'], maxRestarts: 9, windowMs: 10_000_000 }],
    });
    try {
      const expected = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000];
      for (const [attempt, delay] of expected.entries()) {
        const waiting = await waitForProgram(system, sup, 'crash', (s) => s.state === 'backoff' && s.restartsInWindow === attempt + 1, `backoff ${attempt}`);
        expect(waiting.nextRetryInMs).toBe(delay);
        expect(waiting.nextRetryAt).toBe(clock.wallNow() + delay);
        clock.advance(delay - 1);
        await system.settle();
        expect((await ProgramSupervisor.status(system, sup)).programs[0]!.state).toBe('backoff');
        clock.advance(1);
        await waitForProgram(system, sup, 'crash', (s) => s.totalRestarts === attempt + 1, `restart ${attempt + 1}`);
      }
      // The ninth restart exceeds maxRestarts: 9 within the window.
      await waitForProgram(system, sup, 'crash', (s) => s.state === 'backoff' && s.restartsInWindow === 9, 'last backoff');
      clock.advance(60_000);
      const fatal = await waitForProgram(system, sup, 'crash', (s) => s.state === 'fatal', 'fatal');
      expect(fatal.totalRestarts).toBe(9);
      expect(eventsOf(entries, 'crash', 'backoff').map((entry) => entry.fields.delayMs)).toEqual([...expected, 60_000]);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('restarts at once with initialMs 0', async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [{ name: 'crash', command: '/bin/sh', args: ['-c', 'exit 1'], maxRestarts: 3, backoff: { initialMs: 0, maxMs: 0 } }],
    });
    try {
      const fatal = await waitForProgram(system, sup, 'crash', (s) => s.state === 'fatal', 'fatal');
      expect(fatal.totalRestarts).toBe(3);
      expect(eventsOf(entries, 'crash', 'backoff').map((entry) => entry.fields.delayMs)).toEqual([0, 0, 0]);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });
});
