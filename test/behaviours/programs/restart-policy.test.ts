import { afterEach, describe, expect, it } from 'vitest';
import { ProgramSupervisor } from '../../../src/behaviours/programs/index.js';
import { backoffDelay as restartDelay } from '../../../src/behaviours/child-spec.js';
import { isFailedExit, restartsAfterExit } from '../../../src/behaviours/programs/restart-policy.js';
import { testSystem } from '../../support/systems.js';
import { captureLogger, eventsOf, expectNoProgramProcesses, nodeProgram, waitForProgram } from './helpers.js';

afterEach(expectNoProgramProcesses);

describe('restart policy (pure)', () => {
  it('treats a non-zero code or a signal as a failure', () => {
    expect(isFailedExit(0, null)).toBe(false);
    expect(isFailedExit(1, null)).toBe(true);
    expect(isFailedExit(null, 'SIGKILL')).toBe(true);
  });

  it('always / on-failure / never are permanent / transient / temporary', () => {
    expect([restartsAfterExit('always', false), restartsAfterExit('always', true)]).toEqual([true, true]);
    expect([restartsAfterExit('on-failure', false), restartsAfterExit('on-failure', true)]).toEqual([false, true]);
    expect([restartsAfterExit('never', false), restartsAfterExit('never', true)]).toEqual([false, false]);
  });

  it('doubles the delay from initialMs and caps it at maxMs', () => {
    const backoff = { initialMs: 1_000, maxMs: 60_000 };
    expect([0, 1, 2, 3, 4, 5, 6, 7, 60].map((attempt) => restartDelay(backoff, attempt))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000,
    ]);
    expect(restartDelay({ initialMs: 0, maxMs: 0 }, 5)).toBe(0);
  });
});

/** Runs one program that exits with `code` and reports what the supervisor made of it. */
async function exitOnce(restart: 'always' | 'on-failure' | 'never', code: number) {
  const system = testSystem();
  const { logger, entries } = captureLogger();
  const sup = await ProgramSupervisor.start(system, {
    logger,
    programs: [nodeProgram('p', `process.exit(${code})`, { restart, maxRestarts: 1, backoff: { initialMs: 10, maxMs: 10 } })],
  });
  try {
    // `always` and `on-failure` (after a failure) run out of their budget of 1 and end fatal; otherwise the program ends stopped.
    const status = await waitForProgram(system, sup, 'p', (s) => (s.state === 'stopped' || s.state === 'fatal') && s.lastExit !== undefined, 'settled');
    return { status, spawns: eventsOf(entries, 'p', 'spawned').length };
  } finally {
    await ProgramSupervisor.stop(system, sup);
  }
}

describe('restart policy (real processes)', () => {
  it('always: restarts after a clean exit too', async () => {
    const { status, spawns } = await exitOnce('always', 0);
    expect(status.state).toBe('fatal');
    expect(spawns).toBe(2);
    expect(status.lastExit).toMatchObject({ code: 0, signal: null, cause: 'exit' });
  });

  it('on-failure: a clean exit stops the program', async () => {
    const { status, spawns } = await exitOnce('on-failure', 0);
    expect(status.state).toBe('stopped');
    expect(spawns).toBe(1);
    expect(status.totalRestarts).toBe(0);
  });

  it('on-failure: a non-zero exit restarts it', async () => {
    const { status, spawns } = await exitOnce('on-failure', 3);
    expect(status.state).toBe('fatal');
    expect(spawns).toBe(2);
    expect(status.totalRestarts).toBe(1);
    expect(status.lastExit).toMatchObject({ code: 3, signal: null });
  });

  it('never: not even a failure restarts it', async () => {
    const { status, spawns } = await exitOnce('never', 3);
    expect(status.state).toBe('stopped');
    expect(spawns).toBe(1);
    expect(status.lastExit).toMatchObject({ code: 3 });
  });

  it('a program that cannot be spawned is retried within its budget, then fatal (supervisord startretries)', async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [{ name: 'missing', command: 'molo-no-such-command', restart: 'never', maxRestarts: 2, backoff: { initialMs: 5, maxMs: 5 } }],
    });
    try {
      const status = await waitForProgram(system, sup, 'missing', (s) => s.state === 'fatal', 'fatal');
      expect(status.lastExit).toMatchObject({ cause: 'spawn-error', error: 'ENOENT', code: null, signal: null });
      expect(eventsOf(entries, 'missing', 'spawn-failed')).toHaveLength(3);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('startMs: an exit before the program counts as started is a failed start', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [
        nodeProgram('quick', 'setTimeout(() => process.exit(0), 20)', { restart: 'never', startMs: 2_000, maxRestarts: 1, backoff: { initialMs: 5, maxMs: 5 } }),
        nodeProgram('steady', 'setInterval(() => {}, 1000)', { startMs: 1_000 }),
      ],
    });
    try {
      const steady = (await ProgramSupervisor.status(system, sup)).programs[1]!;
      expect(steady).toMatchObject({ state: 'starting', uptimeMs: undefined });
      expect(steady.pid).toBeGreaterThan(0);
      // `never` does not apply: failed starts are retried until the budget is spent.
      const quick = await waitForProgram(system, sup, 'quick', (s) => s.state === 'fatal', 'fatal');
      expect(quick.lastExit).toMatchObject({ code: 0, cause: 'exit' });
      const running = await waitForProgram(system, sup, 'steady', (s) => s.state === 'running', 'running after startMs');
      expect(running.pid).toBe(steady.pid);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });
});
