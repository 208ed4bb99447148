import { afterEach, describe, expect, it } from 'vitest';
import { BehaviourErrorCode } from '../../../src/behaviours/errors.js';
import { ProgramAlreadyStarted, ProgramNotFound, ProgramSupervisor } from '../../../src/behaviours/programs/index.js';
import { testSystem } from '../../support/systems.js';
import { captureLogger, expectNoProgramProcesses, isRunning, LONG_RUNNING, nodeProgram, waitForProgram } from './helpers.js';

afterEach(expectNoProgramProcesses);

describe('manual start, stop and restart by name', () => {
  it('starts a program that does not autostart, refuses a second start, stops it, and stop is idempotent', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const sup = await ProgramSupervisor.start(system, { logger, programs: [nodeProgram('later', LONG_RUNNING, { autostart: false })] });
    try {
      expect((await ProgramSupervisor.status(system, sup)).programs[0]).toMatchObject({ state: 'stopped', pid: undefined, lastExit: undefined });
      const started = await ProgramSupervisor.startProgram(system, sup, 'later');
      expect(started.state).toBe('running');
      expect(started.pid).toBeGreaterThan(0);
      const again = ProgramSupervisor.startProgram(system, sup, 'later');
      await expect(again).rejects.toBeInstanceOf(ProgramAlreadyStarted);
      await expect(again).rejects.toMatchObject({ code: BehaviourErrorCode.ProgramAlreadyStarted, program: 'later', state: 'running' });
      expect((await ProgramSupervisor.stopProgram(system, sup, 'later')).state).toBe('stopped');
      expect((await ProgramSupervisor.stopProgram(system, sup, 'later')).state).toBe('stopped');
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('restarts a running program with a new process, not counted as an automatic restart', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const sup = await ProgramSupervisor.start(system, { logger, programs: [nodeProgram('svc', LONG_RUNNING)] });
    try {
      const before = await waitForProgram(system, sup, 'svc', isRunning, 'running');
      const after = await ProgramSupervisor.restartProgram(system, sup, 'svc');
      expect(after.state).toBe('running');
      expect(after.pid).not.toBe(before.pid);
      expect(after.totalRestarts).toBe(0);
      expect(after.lastExit).toMatchObject({ cause: 'stop' });
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('a fatal program can be started again, with a fresh budget', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [nodeProgram('flaky', 'setTimeout(() => process.exit(1), 30)', { maxRestarts: 1, backoff: { initialMs: 10, maxMs: 10 } })],
    });
    try {
      const fatal = await waitForProgram(system, sup, 'flaky', (s) => s.state === 'fatal', 'fatal');
      expect(fatal.restartsInWindow).toBe(2);
      const started = await ProgramSupervisor.startProgram(system, sup, 'flaky');
      expect(started).toMatchObject({ state: 'running', restartsInWindow: 0 });
      // And it is supervised again: it fails, restarts once, and is fatal again.
      const again = await waitForProgram(system, sup, 'flaky', (s) => s.state === 'fatal', 'fatal again');
      expect(again.totalRestarts).toBe(fatal.totalRestarts + 1);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('stopping a program in backoff cancels its retry; restarting it starts it at once', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [nodeProgram('crash', 'setTimeout(() => process.exit(1), 20)', { backoff: { initialMs: 60_000, maxMs: 60_000 } })],
    });
    try {
      const waiting = await waitForProgram(system, sup, 'crash', (s) => s.state === 'backoff', 'backoff');
      expect(waiting.nextRetryInMs).toBeGreaterThan(59_000);
      const stopped = await ProgramSupervisor.stopProgram(system, sup, 'crash');
      expect(stopped).toMatchObject({ state: 'stopped', nextRetryAt: undefined, nextRetryInMs: undefined });
      expect(system.info(sup)!.timers).toBe(0);
      await waitForProgram(system, sup, 'crash', (s) => s.state === 'stopped', 'still stopped');
      const restarted = await ProgramSupervisor.restartProgram(system, sup, 'crash');
      expect(restarted.state).toBe('running');
      const backoffAgain = await waitForProgram(system, sup, 'crash', (s) => s.state === 'backoff', 'backoff again');
      const viaRestart = await ProgramSupervisor.restartProgram(system, sup, 'crash');
      expect(viaRestart.state).toBe('running');
      expect(viaRestart.pid).not.toBe(backoffAgain.pid);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('names an unknown program in a typed error', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const sup = await ProgramSupervisor.start(system, { logger, programs: [] });
    try {
      for (const operation of [ProgramSupervisor.startProgram, ProgramSupervisor.stopProgram, ProgramSupervisor.restartProgram]) {
        await expect(operation(system, sup, 'ghost')).rejects.toMatchObject({ code: 'PROGRAM_NOT_FOUND', program: 'ghost' });
      }
      await expect(ProgramSupervisor.startProgram(system, sup, 'ghost')).rejects.toBeInstanceOf(ProgramNotFound);
      expect(await ProgramSupervisor.status(system, sup)).toEqual({ maxPrograms: 64, programs: [] });
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('a restart asked for while the program is stopping starts it once it has stopped', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const slow = 'process.on("SIGTERM", () => setTimeout(() => process.exit(0), 100)); console.log("up"); setInterval(() => {}, 1000);';
    const sup = await ProgramSupervisor.start(system, { logger, programs: [nodeProgram('slow', slow)] });
    try {
      const before = await waitForProgram(system, sup, 'slow', isRunning, 'running');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stopping = ProgramSupervisor.stopProgram(system, sup, 'slow');
      const starting = ProgramSupervisor.startProgram(system, sup, 'slow');
      expect((await stopping).state).toBe('stopped');
      const started = await starting;
      expect(started.state).toBe('running');
      expect(started.pid).not.toBe(before.pid);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });
});
