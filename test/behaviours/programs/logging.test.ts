import { afterEach, describe, expect, it } from 'vitest';
import { jsonLineLogger, ProgramSupervisor } from '../../../src/behaviours/programs/index.js';
import { LineSplitter } from '../../../src/behaviours/programs/line-splitter.js';
import { testSystem } from '../../support/systems.js';
import { captureLogger, expectNoProgramProcesses, linesOf, nodeProgram, waitForProgram } from './helpers.js';

afterEach(expectNoProgramProcesses);

function split(chunks: (string | Buffer)[], maxLineBytes = 64): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter(maxLineBytes, (line) => lines.push(line));
  for (const chunk of chunks) splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  splitter.end();
  return lines;
}

describe('LineSplitter', () => {
  it('splits on newlines across chunks, drops \\r, keeps empty lines, flushes the tail', () => {
    expect(split(['one\ntw', 'o\r\n\nthr', 'ee'])).toEqual(['one', 'two', '', 'three']);
  });

  it('cuts a long line into pieces of at most maxLineBytes', () => {
    expect(split(['a'.repeat(10) + '\nb'], 4)).toEqual(['aaaa', 'aaaa', 'aa', 'b']);
  });

  it('never cuts a UTF-8 character in two, even when it arrives split across chunks', () => {
    const euro = Buffer.from('€'); // 3 bytes
    const text = Buffer.concat([Buffer.from('ab'), euro, euro, Buffer.from('\n')]);
    const lines = split([text.subarray(0, 3), text.subarray(3, 6), text.subarray(6)], 4);
    expect(lines).toEqual(['ab', '€', '€']);
    expect(lines.join('')).toBe('ab€€');
    for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(4);
  });
});

describe('program output to the logger', () => {
  it('logs stdout lines at info and stderr lines at warn, one entry per line, long lines split', async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const script = [
      'process.stdout.write("first\\nsec");',
      'setTimeout(() => { process.stdout.write("ond\\n" + "x".repeat(2500) + "\\n"); console.error("oops"); }, 20);',
      'setTimeout(() => { process.stdout.write("no newline at the end"); }, 40);',
    ].join('');
    const sup = await ProgramSupervisor.start(system, {
      logger,
      maxLineBytes: 1_024,
      programs: [nodeProgram('talker', script, { restart: 'never' })],
    });
    try {
      const done = await waitForProgram(system, sup, 'talker', (s) => s.state === 'stopped', 'exited');
      expect(done.lastExit).toMatchObject({ code: 0 });
      // Output may still be in the pipe when the exit is seen.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(linesOf(entries, 'talker')).toEqual(['first', 'second', 'x'.repeat(1024), 'x'.repeat(1024), 'x'.repeat(452), 'no newline at the end']);
      expect(linesOf(entries, 'talker', 'stderr')).toEqual(['oops']);
      const line = entries.find((entry) => entry.msg === 'first')!;
      expect(line.level).toBe('info');
      expect(line.fields).toMatchObject({ program: 'talker', stream: 'stdout', pid: expect.any(Number) });
      expect(entries.find((entry) => entry.msg === 'oops')!.level).toBe('warn');
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('accepts a logger without child() and adds the program to every entry', async () => {
    const system = testSystem();
    const { logger, entries } = captureLogger();
    const plain = { info: logger.info, warn: logger.warn, error: logger.error };
    const sup = await ProgramSupervisor.start(system, { logger: plain, programs: [nodeProgram('echo', 'console.log("hi")', { restart: 'never' })] });
    try {
      await waitForProgram(system, sup, 'echo', (s) => s.state === 'stopped', 'exited');
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(linesOf(entries, 'echo')).toEqual(['hi']);
    } finally {
      await ProgramSupervisor.stop(system, sup);
    }
  });

  it('the default logger writes pino-style JSON lines', () => {
    const written: string[] = [];
    const logger = jsonLineLogger({ write: (chunk: string) => written.push(chunk) }).child!({ program: 'p' });
    logger.warn({ stream: 'stderr', pid: 7 }, 'careful');
    expect(written).toHaveLength(1);
    expect(written[0]!.endsWith('\n')).toBe(true);
    expect(JSON.parse(written[0]!)).toMatchObject({ level: 40, time: expect.any(Number), program: 'p', stream: 'stderr', pid: 7, msg: 'careful' });
  });
});
