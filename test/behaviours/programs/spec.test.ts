import { describe, expect, it } from 'vitest';
import { InvalidProgramSpec, MAX_PROGRAMS, ProgramSupervisor, TooManyPrograms, type ProgramSpec } from '../../../src/behaviours/programs/index.js';
import { resolveProgramSpec, resolveProgramSupervisorSpec } from '../../../src/behaviours/programs/spec.js';
import { testSystem } from '../../support/systems.js';

const program = (name: string, extra: Partial<ProgramSpec> = {}): ProgramSpec => ({ name, command: 'true', ...extra });

describe('program spec validation', () => {
  it('fills in the S7-4 defaults', () => {
    expect(resolveProgramSpec(program('p', { health: { type: 'tcp', port: 8080 } }))).toEqual({
      name: 'p',
      command: 'true',
      args: [],
      env: {},
      cwd: undefined,
      restart: 'on-failure',
      maxRestarts: 5,
      windowMs: 60_000,
      backoff: { initialMs: 1_000, maxMs: 60_000 },
      stopSignal: 'SIGTERM',
      stopTimeoutMs: 10_000,
      startMs: 0,
      autostart: true,
      health: { type: 'tcp', host: '127.0.0.1', port: 8080, intervalMs: 10_000, timeoutMs: 5_000, failures: 3, onUnhealthy: 'restart' },
    });
    expect(resolveProgramSupervisorSpec({ programs: [] })).toMatchObject({ maxPrograms: 64, maxLineBytes: 65_536 });
  });

  it('caps programs per supervisor at 64 (S7-10) with an error naming the cap', () => {
    const many = Array.from({ length: MAX_PROGRAMS + 1 }, (_, i) => program(`p${i}`));
    const attempt = () => resolveProgramSupervisorSpec({ programs: many });
    expect(attempt).toThrow(TooManyPrograms);
    expect(attempt).toThrow(/maxPrograms = 64/);
    expect(attempt).toThrow(expect.objectContaining({ code: 'PROGRAM_MAX_PROGRAMS', maxPrograms: 64, requested: 65 }));
    expect(() => resolveProgramSupervisorSpec({ programs: many.slice(0, 3), maxPrograms: 2 })).toThrow(/maxPrograms = 2/);
    expect(() => resolveProgramSupervisorSpec({ programs: [], maxPrograms: 65 })).toThrow(expect.objectContaining({ option: 'maxPrograms' }));
  });

  it.each([
    ['name', { name: '' }],
    ['name', { name: 'has space' }],
    ['command', { command: '' }],
    ['args', { args: ['ok', 3 as unknown as string] }],
    ['env', { env: { 'A=B': 'x' } }],
    ['restart', { restart: 'sometimes' as 'always' }],
    ['maxRestarts', { maxRestarts: -1 }],
    ['windowMs', { windowMs: 0 }],
    ['backoff.maxMs', { backoff: { initialMs: 500, maxMs: 100 } }],
    ['stopTimeoutMs', { stopTimeoutMs: 300_001 }],
    ['stopSignal', { stopSignal: 'SIGKILL' as 'SIGTERM' }],
    ['health.port', { health: { type: 'tcp', port: 70_000 } }],
    ['health.failures', { health: { type: 'command', command: 'true', failures: 0 } }],
    ['health.onUnhealthy', { health: { type: 'tcp', port: 1, onUnhealthy: 'ignore' as 'report' } }],
    ['health.type', { health: { type: 'http', port: 1 } as unknown as ProgramSpec['health'] }],
  ] as const)('rejects a bad %s', (option, extra) => {
    const spec = { ...program('p'), ...extra } as ProgramSpec;
    expect(() => resolveProgramSpec(spec)).toThrow(InvalidProgramSpec);
    expect(() => resolveProgramSpec(spec)).toThrow(expect.objectContaining({ code: 'PROGRAM_INVALID_SPEC', option }));
  });

  it('rejects duplicate names, a long-line cap out of range and a logger without methods', () => {
    expect(() => resolveProgramSupervisorSpec({ programs: [program('a'), program('a')] })).toThrow(/'a'.*name is used by another program/);
    expect(() => resolveProgramSupervisorSpec({ programs: [], maxLineBytes: 2 * 1_048_576 })).toThrow(expect.objectContaining({ option: 'maxLineBytes' }));
    expect(() => resolveProgramSupervisorSpec({ programs: [], logger: {} as never })).toThrow(expect.objectContaining({ option: 'logger' }));
  });

  it('ProgramSupervisor.start throws before spawning anything', () => {
    const system = testSystem();
    expect(() => ProgramSupervisor.start(system, { programs: [program('p', { maxRestarts: 1.5 })] })).toThrow(InvalidProgramSpec);
    expect(system.actorCount).toBe(0);
  });
});
