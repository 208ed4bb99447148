/**
 * The default logger's format (issue 25): pretty (pino-pretty) for a person at a terminal at debug
 * or info, JSON lines otherwise. The choice is a pure function; the end-to-end cases run the
 * crash fixture in real child processes, once on a pipe and once on a real pseudo-terminal
 * (util-linux `script`), and read what the default logger wrote.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chooseLogFormat, createLogger, LOG_FORMAT_ENV } from '../../src/telemetry/index.js';
import { projectRoot, runScript, TS_NODE_ARGS } from '../support/run-script.js';
import { eventually } from '../support/systems.js';

const FIXTURE = 'test/telemetry/fixtures/plain-system-crash.ts';
const NO_ENV = {};

describe('chooseLogFormat', () => {
  it('is pretty on a terminal at debug or info, JSON on a terminal at a quieter level and off a terminal at any level', () => {
    expect(chooseLogFormat({ isTTY: true, level: 'info', env: NO_ENV })).toBe('pretty');
    expect(chooseLogFormat({ isTTY: true, level: 'debug', env: NO_ENV })).toBe('pretty');
    for (const level of ['trace', 'warn', 'error', 'fatal', 'silent'] as const) expect(chooseLogFormat({ isTTY: true, level, env: NO_ENV }), level).toBe('json');
    for (const level of ['debug', 'info', 'warn'] as const) expect(chooseLogFormat({ isTTY: false, level, env: NO_ENV }), level).toBe('json');
  });

  it(`${LOG_FORMAT_ENV} forces either format, and a bad value is refused`, () => {
    expect(chooseLogFormat({ isTTY: true, level: 'info', env: { [LOG_FORMAT_ENV]: 'json' } })).toBe('json');
    expect(chooseLogFormat({ isTTY: false, level: 'warn', env: { [LOG_FORMAT_ENV]: ' Pretty ' } })).toBe('pretty');
    expect(chooseLogFormat({ isTTY: true, level: 'info', env: { [LOG_FORMAT_ENV]: '' } })).toBe('pretty');
    expect(() => chooseLogFormat({ isTTY: true, level: 'info', env: { [LOG_FORMAT_ENV]: 'yaml' } })).toThrow(RangeError);
  });
});

describe("createLogger's format", () => {
  it('pretty writes pino-pretty lines (level name, message, fields), not JSON', async () => {
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const logger = createLogger({ destination: stream, format: 'pretty', level: 'info' });
    logger.info({ order: 42 }, 'placed');
    await eventually(() => text.includes('placed'), 5_000, 'a pretty line');
    expect(text).toMatch(/INFO.*placed/);
    expect(text).toContain('order: 42');
    expect(text.trimStart().startsWith('{')).toBe(false);
  });

  it('refuses an unknown format', () => {
    expect(() => createLogger({ format: 'xml' as never })).toThrow(RangeError);
  });
});

describe('the default logger, end to end', () => {
  it('writes JSON lines on a pipe', async () => {
    const run = await runScript(FIXTURE, { env: { MOLO_LOG_LEVEL: '', [LOG_FORMAT_ENV]: '' } });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split('\n').filter((line) => line.includes('supervisor.child_terminated'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it.skipIf(!existsSync('/usr/bin/script'))('writes pretty lines on a terminal', async () => {
    // `script` runs the fixture with a pseudo-terminal as its stdin, stdout and stderr, and copies what it printed.
    const command = [process.execPath, ...TS_NODE_ARGS, FIXTURE].map((part) => `'${part}'`).join(' ');
    const output = await new Promise<string>((resolve, reject) => {
      execFile('script', ['-qec', command, '/dev/null'], { cwd: projectRoot, env: { ...process.env, MOLO_LOG_LEVEL: '', [LOG_FORMAT_ENV]: '' }, timeout: 30_000 }, (error, stdout) =>
        error === null ? resolve(stdout) : reject(error),
      );
    });
    // Color codes aside: a level name and the event, never a JSON object.
    const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
    const line = plain.split(/\r?\n/).find((entry) => entry.includes('supervisor.child_terminated'));
    expect(line, plain).toBeDefined();
    expect(line).toMatch(/ERROR/);
    expect(line!.trimStart().startsWith('{')).toBe(false);
    expect(output).toContain('\u001b['); // colored: the destination is a terminal
  });
});
