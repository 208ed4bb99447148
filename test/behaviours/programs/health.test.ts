import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { liveProgramProcessCount, ProgramSupervisor } from '../../../src/behaviours/programs/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { captureLogger, eventsOf, expectNoProgramProcesses, isRunning, LONG_RUNNING, nodeProgram, waitForProgram } from './helpers.js';

afterEach(expectNoProgramProcesses);

function listen(port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

describe('TCP health probe', () => {
  let server: Server;
  let port: number;

  beforeEach(async () => {
    server = await listen();
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    if (server.listening) await close(server);
  });

  it('marks the program healthy, then unhealthy after K failures, and restarts it', async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [
        nodeProgram('web', LONG_RUNNING, {
          restart: 'on-failure',
          backoff: { initialMs: 20, maxMs: 1_000 },
          health: { type: 'tcp', port, intervalMs: 30, timeoutMs: 500, failures: 3 },
        }),
      ],
    });
    try {
      const healthy = await waitForProgram(system, sup, 'web', (s) => s.health === 'healthy', 'healthy');
      await close(server);
      const restarted = await waitForProgram(system, sup, 'web', (s) => s.totalRestarts === 1 && isRunning(s), 'restarted');
      expect(restarted.pid).not.toBe(healthy.pid);
      // A kill for failing health checks is a failure, whatever the exit status: on-failure restarted it.
      expect(restarted.lastExit).toMatchObject({ cause: 'unhealthy', signal: 'SIGTERM' });
      const unhealthy = eventsOf(entries, 'web', 'unhealthy');
      expect(unhealthy).toHaveLength(1);
      expect(unhealthy[0]!.fields).toMatchObject({ failures: 3, detail: 'ECONNREFUSED', action: 'restart' });
      // A fresh run starts unchecked and turns healthy once the port answers again.
      server = await listen(port);
      await waitForProgram(system, sup, 'web', (s) => s.health === 'healthy' && s.pid === restarted.pid, 'healthy again');
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it("onUnhealthy 'report' only marks and logs it, and it recovers", async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [nodeProgram('web', LONG_RUNNING, { health: { type: 'tcp', port, intervalMs: 20, failures: 2, onUnhealthy: 'report' } })],
    });
    try {
      const healthy = await waitForProgram(system, sup, 'web', (s) => s.health === 'healthy', 'healthy');
      await close(server);
      const unhealthy = await waitForProgram(system, sup, 'web', (s) => s.health === 'unhealthy', 'unhealthy');
      expect(unhealthy).toMatchObject({ state: 'running', pid: healthy.pid, totalRestarts: 0 });
      expect(unhealthy.probeFailures).toBeGreaterThanOrEqual(2);
      server = await listen(port);
      const recovered = await waitForProgram(system, sup, 'web', (s) => s.health === 'healthy', 'recovered');
      expect(recovered).toMatchObject({ pid: healthy.pid, probeFailures: 0, totalRestarts: 0 });
      expect(eventsOf(entries, 'web', 'unhealthy')).toHaveLength(1);
      expect(eventsOf(entries, 'web', 'unhealthy')[0]!.fields.action).toBe('report');
      expect(eventsOf(entries, 'web', 'healthy')).toHaveLength(1);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });
});

describe('command health probe', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'molo-probe-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is healthy while the command exits 0 and restarts the program when it keeps failing', async () => {
    const flag = join(dir, 'ok');
    writeFileSync(flag, '');
    const system = testSystem();
    const { logger } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [
        nodeProgram('worker', LONG_RUNNING, {
          restart: 'always',
          backoff: { initialMs: 10, maxMs: 100 },
          health: { type: 'command', command: '/bin/sh', args: ['-c', `test -f '${flag}'`], intervalMs: 20, failures: 2 },
        }),
      ],
    });
    try {
      const healthy = await waitForProgram(system, sup, 'worker', (s) => s.health === 'healthy', 'healthy');
      rmSync(flag);
      const restarted = await waitForProgram(system, sup, 'worker', (s) => s.totalRestarts >= 1, 'restarted');
      expect(restarted.lastExit?.cause).toBe('unhealthy');
      writeFileSync(flag, '');
      const again = await waitForProgram(system, sup, 'worker', (s) => s.health === 'healthy', 'healthy again');
      expect(again.pid).not.toBe(healthy.pid);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('counts a probe that does not answer in time as a failure, and kills it', async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const sup = await ProgramSupervisor.start(system, {
      logger,
      programs: [
        nodeProgram('worker', LONG_RUNNING, {
          health: { type: 'command', command: '/bin/sh', args: ['-c', 'sleep 30'], intervalMs: 10, timeoutMs: 40, failures: 2, onUnhealthy: 'report' },
        }),
      ],
    });
    try {
      const status = await waitForProgram(system, sup, 'worker', (s) => s.health === 'unhealthy', 'unhealthy');
      expect(status.totalRestarts).toBe(0);
      expect(eventsOf(entries, 'worker', 'unhealthy')[0]!.fields.detail).toBe('timeout');
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
    // Neither the program nor any timed-out probe (`sleep 30`) is left behind.
    await eventually(() => liveProgramProcessCount() === 0, 2_000, 'no program or probe process left');
  });
});
