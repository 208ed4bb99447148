/**
 * Stopping: SIGTERM then SIGKILL, the whole process group, and no process left behind however the
 * supervisor ends (stop, killed, system shutdown, stopped by its OTP parent).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Supervisor } from '../../../src/behaviours/index.js';
import { liveProgramProcessCount, ProgramSupervisor } from '../../../src/behaviours/programs/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { captureLogger, eventsOf, expectNoProgramProcesses, isRunning, linesOf, type LogEntry, LONG_RUNNING, nodeProgram, pidAlive, survivors, waitForProgram } from './helpers.js';

afterEach(expectNoProgramProcesses);

/** Starts a grandchild in the program's process group and prints its pid. */
const WITH_GRANDCHILD = [
  'const { spawn } = require("node:child_process");',
  'const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });',
  'console.log("grandchild " + child.pid);',
  'setInterval(() => {}, 1000);',
].join('');

const IGNORES_SIGTERM = 'process.on("SIGTERM", () => console.log("ignoring SIGTERM")); console.log("up"); setInterval(() => {}, 1000);';

async function grandchildPid(entries: LogEntry[], program: string): Promise<number> {
  await eventually(() => linesOf(entries, program).some((line) => line.startsWith('grandchild ')), 5_000, 'grandchild pid');
  return Number(linesOf(entries, program).find((line) => line.startsWith('grandchild '))!.slice('grandchild '.length));
}

describe('stopping programs', () => {
  it('stops with SIGTERM and resolves once the program has exited', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const sup = await ProgramSupervisor.start(system, { logger, programs: [nodeProgram('calm', LONG_RUNNING, { restart: 'always' })] });
    try {
      const running = await waitForProgram(system, sup, 'calm', isRunning, 'running');
      const stopped = await ProgramSupervisor.stopProgram(system, sup, 'calm');
      expect(stopped).toMatchObject({ state: 'stopped', pid: undefined, totalRestarts: 0 });
      expect(stopped.lastExit).toMatchObject({ cause: 'stop', signal: 'SIGTERM' });
      expect(pidAlive(running.pid!)).toBe(false);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('sends SIGKILL when the program outlives its stop timeout', async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [nodeProgram('stubborn', IGNORES_SIGTERM, { stopTimeoutMs: 150 })],
    });
    try {
      await eventually(() => linesOf(entries, 'stubborn').includes('up'), 5_000, 'handler installed');
      const started = performance.now();
      const stopped = await ProgramSupervisor.stopProgram(system, sup, 'stubborn');
      expect(performance.now() - started).toBeGreaterThanOrEqual(140);
      expect(stopped.lastExit).toMatchObject({ cause: 'stop', signal: 'SIGKILL' });
      expect(linesOf(entries, 'stubborn')).toContain('ignoring SIGTERM');
      expect(eventsOf(entries, 'stubborn', 'kill')).toHaveLength(1);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('uses the stop signal a program asks for', async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const script = 'process.on("SIGINT", () => { console.log("got SIGINT"); process.exit(0); }); console.log("up"); setInterval(() => {}, 1000);';
    const sup = await ProgramSupervisor.start(system, { logger, programs: [nodeProgram('polite', script, { stopSignal: 'SIGINT' })] });
    try {
      await eventually(() => linesOf(entries, 'polite').includes('up'), 5_000, 'handler installed');
      const stopped = await ProgramSupervisor.stopProgram(system, sup, 'polite');
      expect(stopped.lastExit).toMatchObject({ code: 0, signal: null, cause: 'stop' });
      await eventually(() => linesOf(entries, 'polite').includes('got SIGINT'), 2_000, 'SIGINT seen');
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });
});

describe('no orphan processes', () => {
  it('stopping the supervisor kills every program and their process groups (grandchildren too)', async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [
        nodeProgram('parent', WITH_GRANDCHILD),
        nodeProgram('stubborn', IGNORES_SIGTERM, { stopTimeoutMs: 100 }),
        nodeProgram('plain', LONG_RUNNING),
      ],
    });
    const pids: number[] = [];
    try {
      for (const name of ['parent', 'stubborn', 'plain']) pids.push((await waitForProgram(system, sup, name, isRunning, 'running')).pid!);
      pids.push(await grandchildPid(entries, 'parent'));
      await eventually(() => linesOf(entries, 'stubborn').includes('up'), 5_000, 'handler installed');
      expect(pids.every(pidAlive)).toBe(true);
    } finally {
      expect(await ProgramSupervisor.stop(system, sup)).toBe('shutdown');
    }
    expect(await survivors(pids)).toEqual([]);
    expect(liveProgramProcessCount()).toBe(0);
  });

  it('a group does not outlive its leader: SIGKILL of the program takes its grandchild along', async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const sup = await ProgramSupervisor.start(system, { logger, programs: [nodeProgram('parent', WITH_GRANDCHILD, { restart: 'never' })] });
    try {
      const running = await waitForProgram(system, sup, 'parent', isRunning, 'running');
      const grandchild = await grandchildPid(entries, 'parent');
      process.kill(running.pid!, 'SIGKILL');
      await waitForProgram(system, sup, 'parent', (s) => s.state === 'stopped', 'stopped');
      expect(await survivors([running.pid!, grandchild])).toEqual([]);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('a supervisor killed outright (no terminate) still kills its programs', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const sup = await ProgramSupervisor.start(system, { logger, programs: [nodeProgram('a', LONG_RUNNING), nodeProgram('b', IGNORES_SIGTERM)] });
    const pids = [
      (await waitForProgram(system, sup, 'a', isRunning, 'running')).pid!,
      (await waitForProgram(system, sup, 'b', isRunning, 'running')).pid!,
    ];
    system.exit(sup, 'kill');
    expect(system.isAlive(sup)).toBe(false);
    expect(await survivors(pids)).toEqual([]);
  });

  it('system.shutdown() kills the programs of every program supervisor', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const sup = await ProgramSupervisor.start(system, { logger, programs: [nodeProgram('a', LONG_RUNNING)] });
    const pid = (await waitForProgram(system, sup, 'a', isRunning, 'running')).pid!;
    system.shutdown();
    expect(await survivors([pid])).toEqual([]);
  });

  it('a program in backoff is stopped without waiting for its retry', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [nodeProgram('crash', 'process.exit(2)', { backoff: { initialMs: 60_000, maxMs: 60_000 } })],
    });
    await waitForProgram(system, sup, 'crash', (s) => s.state === 'backoff', 'backoff');
    expect(await ProgramSupervisor.stop(system, sup)).toBe('shutdown');
    expect(system.timerCount).toBe(0);
  });
});

describe('as a child of an OTP Supervisor', () => {
  it('starts linked under the Supervisor and stops its programs when the Supervisor stops', async () => {
    const system = testSystem();
    const { logger } = captureLogger();
    const spec = { logger, programs: [nodeProgram('a', LONG_RUNNING, { stopTimeoutMs: 2_000 }), nodeProgram('b', IGNORES_SIGTERM, { stopTimeoutMs: 100 })] };
    const child = ProgramSupervisor.child('programs', spec, { name: 'programs' });
    expect(child).toMatchObject({ id: 'programs', type: 'worker', restart: 'permanent', shutdown: 2_000 + 5_000 + 1_000 });
    const root = await Supervisor.start(system, { children: [child] });
    const ref = system.whereis('programs')!;
    expect((await Supervisor.whichChildren(system, root))[0]!.ref).toBe(ref);
    expect(system.info(ref)!.links).toContainEqual(root);
    const pids = [
      (await waitForProgram(system, ref, 'a', isRunning, 'running')).pid!,
      (await waitForProgram(system, ref, 'b', isRunning, 'running')).pid!,
    ];
    expect(await Supervisor.stop(system, root)).toBe('shutdown');
    expect(system.isAlive(ref)).toBe(false);
    expect(await survivors(pids)).toEqual([]);
  });

  it('validates the spec when the child spec is made', () => {
    expect(() => ProgramSupervisor.child('programs', { programs: [{ name: 'bad name', command: 'x' }] })).toThrow(
      expect.objectContaining({ code: 'PROGRAM_INVALID_SPEC', option: 'name' }),
    );
  });
});
