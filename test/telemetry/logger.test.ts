import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, silentLogger } from '../../src/telemetry/index.js';
import { eventually } from '../support/systems.js';
import { logCapture } from './helpers.js';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('createLogger', () => {
  it('writes JSON lines at or above its level to a stream', async () => {
    const capture = logCapture();
    const logger = createLogger({ destination: capture.stream, level: 'warn', name: 'node-a' });
    logger.info('hidden');
    logger.warn({ disk: 'full' }, 'shown');
    logger.child({ part: 'pool' }).error('also shown');
    await eventually(() => capture.records().length === 2, 5_000, 'two lines');
    expect(capture.records()).toMatchObject([
      { level: 40, name: 'node-a', disk: 'full', msg: 'shown' },
      { level: 50, name: 'node-a', part: 'pool', msg: 'also shown' },
    ]);
    expect(capture.records()[0]).toHaveProperty('time');
    expect(logger.isLevelEnabled('info')).toBe(false);
  });

  it('appends to a file, creating its directory, and redacts', () => {
    const directory = mkdtempSync(join(tmpdir(), 'molo-log-'));
    directories.push(directory);
    const file = join(directory, 'logs', 'molo.log');
    const logger = createLogger({ destination: file, sync: true, redact: ['password'] });
    logger.info({ user: 'ada', password: 'hunter2' }, 'login');
    logger.flush();
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toMatchObject([{ level: 30, user: 'ada', password: '[Redacted]', msg: 'login' }]);
  });

  it('has a silent logger that drops everything', () => {
    expect(silentLogger.child({ a: 1 })).toBe(silentLogger);
    expect(silentLogger.isLevelEnabled('fatal')).toBe(false);
    expect(() => silentLogger.error({ a: 1 }, 'nothing')).not.toThrow();
  });
});
